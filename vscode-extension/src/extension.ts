// codesift for VS Code: starts `codesift serve`, registers it for every file, and adds the
// palette commands and a status-bar item. The server does the work; this file wires it up.
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { Commands } from './commands';
import { findServerCommand, INSTALL_HELP, ServerCommand } from './serverCommand';
import { explicitOptions, serverSettingKeys } from './settings';
import { StatusItem } from './status';

const SHOW_STATUS = 'codesift.vscode.showStatus';

class Extension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private server: ServerCommand | undefined;
  private readonly output = vscode.window.createOutputChannel('codesift', { log: true });
  private readonly status = new StatusItem(SHOW_STATUS);
  private readonly commands: Commands;
  private readonly pagesDir: vscode.Uri;
  private readonly keys: string[];
  private healthTimer: NodeJS.Timeout | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.keys = serverSettingKeys(context.extension.packageJSON as object);
    // Pages must be `file:` documents outside the workspace (see Pages): a folder of this extension
    // host's own in the temp dir (the storage URIs are vscode-userdata: in a browser), removed on exit.
    this.pagesDir = vscode.Uri.file(path.join(os.tmpdir(), `codesift-pages-${process.pid}`));
    this.commands = new Commands(() => this.client, this.pagesDir);
  }

  register(): void {
    const c = this.commands;
    const commands: [string, () => unknown][] = [
      ['codesift.vscode.search', () => c.search()],
      ['codesift.vscode.searchSymbols', () => c.searchSymbols()],
      ['codesift.vscode.grep', () => c.grep()],
      ['codesift.vscode.research', () => c.research()],
      ['codesift.vscode.callers', () => c.callers()],
      ['codesift.vscode.implementations', () => c.implementations()],
      ['codesift.vscode.reindex', () => c.reindex()],
      [SHOW_STATUS, () => this.showStatus()],
      ['codesift.vscode.showLogs', () => this.output.show()],
      ['codesift.vscode.restartServer', () => this.restart()],
    ];
    for (const [id, fn] of commands) this.context.subscriptions.push(vscode.commands.registerCommand(id, fn));
    this.context.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => void this.configurationChanged(e)),
      this,
    );
  }

  async start(): Promise<void> {
    this.status.setHealth({ kind: 'starting' });
    this.server = await findServerCommand();
    if (!this.server) {
      this.status.setHealth({ kind: 'missing' });
      this.output.error('no codesift server found: set codesift.server.command or install codesift');
      void this.notFound();
      return;
    }
    this.output.info(`starting ${[this.server.command, ...this.server.args].join(' ')} (${this.server.origin})`);
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: this.server.command,
      args: this.server.args,
      transport: TransportKind.stdio,
      options: cwd ? { cwd } : {},
    };
    const clientOptions: LanguageClientOptions = {
      // Every file on disk: workspace symbols, call hierarchy and implementations come from the server.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      initializationOptions: () => explicitOptions(this.keys),
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          if (this.status.progress(token, params)) this.refreshHealth();
          next(token, params);
        },
        workspace: {
          // The index's own writes (and git's) are not source changes: reporting them would have
          // the server re-check them after every write it makes, again and again.
          didChangeWatchedFile: (event, next) => (isOwnWrite(event.uri) ? Promise.resolve() : next(event)),
          // The server pulls its `codesift` section per folder: answer with what the user set.
          configuration: (params, token, next) => {
            if (!params.items.some((i) => i.section === 'codesift')) return next(params, token);
            return params.items.map((item) =>
              item.section === 'codesift'
                ? explicitOptions(this.keys, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : vscode.workspace.getConfiguration(item.section, item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined),
            );
          },
        },
      },
    };
    const client = new LanguageClient('codesift', 'codesift', serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.status.setHealth({ kind: 'error', message: 'the codesift server stopped (see codesift: Show Logs)' });
      }
    });
    try {
      await client.start();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.status.setHealth({ kind: 'error', message });
      void vscode.window
        .showErrorMessage(`codesift: the server did not start (${this.server.origin}): ${message}`, 'Show Logs', 'Open Settings')
        .then((choice) => this.onChoice(choice));
      return;
    }
    this.refreshHealth();
  }

  private async notFound(): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
      'codesift: the codesift language server was not found. Install codesift (pip install, or `make setup` in a checkout) ' +
        'or point codesift.server.command at it.',
      'How to Install',
      'Open Settings',
    );
    await this.onChoice(choice);
  }

  private async onChoice(choice: string | undefined): Promise<void> {
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'codesift.server.command');
    } else if (choice === 'Show Logs') {
      this.output.show();
    } else if (choice === 'How to Install') {
      await this.commands.pages.show('install codesift', INSTALL_HELP);
    }
  }

  /** Ask the server how the index is; look again later while vectors are still being made. */
  private refreshHealth(): void {
    clearTimeout(this.healthTimer);
    this.commands.status().then(
      (projects) => {
        this.status.setHealth({ kind: 'status', projects });
        const busy = projects.some((p) => p.vectorsPending > 0 || !p.exists);
        if (busy || this.status.indexing) this.healthTimer = setTimeout(() => this.refreshHealth(), 5000);
      },
      (err: unknown) => {
        this.output.warn(`status: ${err instanceof Error ? err.message : String(err)}`);
        this.healthTimer = setTimeout(() => this.refreshHealth(), 5000);
      },
    );
  }

  private async showStatus(): Promise<void> {
    if (!this.client?.isRunning()) {
      if (!this.server) return this.notFound();
      this.output.show();
      return;
    }
    await this.commands.showStatus(`${[this.server?.command, ...(this.server?.args ?? [])].join(' ')} (${this.server?.origin})`);
  }

  private async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (e.affectsConfiguration('codesift.server.command')) {
      await this.restart();
      return;
    }
    if (!this.keys.some((k) => e.affectsConfiguration(`codesift.${k}`))) return;
    // The server re-reads each folder's settings (pulling them when it can) on this notification.
    const options = explicitOptions(this.keys);
    this.output.info(`settings changed: ${JSON.stringify(options)}`);
    await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { codesift: options } });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.healthTimer);
    const client = this.client;
    this.client = undefined;
    if (client?.isRunning()) await client.stop(5000).catch(() => undefined);
  }

  dispose(): void {
    void this.stop();
    void vscode.workspace.fs.delete(this.pagesDir, { recursive: true }).then(undefined, () => undefined);
    this.status.dispose();
    this.output.dispose();
  }
}

/** True for a file inside a workspace folder's index dir or .git. */
function isOwnWrite(uri: string): boolean {
  const parsed = vscode.Uri.parse(uri);
  const folder = vscode.workspace.getWorkspaceFolder(parsed);
  if (!folder) return false;
  const indexDir = vscode.workspace.getConfiguration('codesift', folder).get<string>('index.indexDir') || '.codesift';
  const rel = parsed.path.slice(folder.uri.path.length).replace(/^\/+/, '');
  return [indexDir.replace(/^\.\/|\/+$/g, ''), '.git'].some((dir) => rel === dir || rel.startsWith(`${dir}/`));
}

let extension: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new Extension(context);
  extension.register();
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
}
