// Which command starts `codesift serve`: the setting, else the first codesift we can find.
import * as childProcess from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

export interface ServerCommand {
  command: string;
  args: string[];
  origin: string; // where it came from, for the logs and the status page
}

const IS_WINDOWS = process.platform === 'win32';
const MODULE_ARGS = ['-m', 'codesift.server.cli', 'serve'];

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, IS_WINDOWS ? fs.constants.F_OK : fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  const exts = IS_WINDOWS ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (isExecutable(file)) return file;
    }
  }
  return undefined;
}

function venvCodesift(folder: vscode.WorkspaceFolder): string | undefined {
  const candidates = IS_WINDOWS
    ? [path.join(folder.uri.fsPath, '.venv', 'Scripts', 'codesift.exe')]
    : [path.join(folder.uri.fsPath, '.venv', 'bin', 'codesift')];
  return candidates.find(isExecutable);
}

/** True when `python -c "import codesift.server.cli"` works (the package is installed there). */
function hasCodesift(python: string): boolean {
  const run = childProcess.spawnSync(python, ['-c', 'import codesift.server.cli'], {
    timeout: 20000,
    stdio: 'ignore',
  });
  return run.status === 0;
}

async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as {
      environments?: { getActiveEnvironmentPath(r?: vscode.Uri): { path: string } };
    };
    return api.environments?.getActiveEnvironmentPath(resource).path;
  } catch {
    return undefined;
  }
}

/** The configured command, or the first codesift found; undefined when there is none. */
export async function findServerCommand(): Promise<ServerCommand | undefined> {
  const configured = vscode.workspace.getConfiguration('codesift').get<string[]>('server.command') ?? [];
  if (configured.length > 0) {
    return { command: configured[0], args: configured.slice(1), origin: 'setting codesift.server.command' };
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const exe = venvCodesift(folder);
    if (exe) return { command: exe, args: ['serve'], origin: `the workspace's ${path.relative(folder.uri.fsPath, exe)}` };
  }
  const exe = onPath('codesift');
  if (exe) return { command: exe, args: ['serve'], origin: 'codesift on PATH' };

  const pythons: [string | undefined, string][] = [
    [await pythonExtensionInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri), "the Python extension's interpreter"],
    [vscode.workspace.getConfiguration('python').get<string>('defaultInterpreterPath'), 'python.defaultInterpreterPath'],
    [onPath('python3'), 'python3 on PATH'],
    [onPath('python'), 'python on PATH'],
  ];
  const tried = new Set<string>();
  for (const [python, origin] of pythons) {
    if (!python || tried.has(python)) continue;
    tried.add(python);
    if (hasCodesift(python)) return { command: python, args: MODULE_ARGS, origin };
  }
  return undefined;
}

export const INSTALL_HELP = `# codesift: the language server was not found

The codesift extension needs the \`codesift\` Python package (Python 3.11+), which
provides the \`codesift serve\` language server.

1. Install it into a Python environment, e.g. in a checkout of codesift:

   \`\`\`
   make setup                 # creates .venv with codesift and the bundled model
   \`\`\`

   or, from a wheel: \`pip install codesift-*.whl\`.

2. Then either
   - open a folder whose \`.venv/bin/codesift\` exists, or
   - put \`codesift\` on PATH, or
   - select that environment's interpreter with the Python extension, or
   - set **codesift.server.command**, e.g. \`["/path/to/.venv/bin/codesift", "serve"]\`.

3. Run **codesift: Restart Server** from the command palette.
`;
