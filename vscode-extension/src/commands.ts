// The palette commands: each asks the server (workspace/executeCommand codesift.*) and shows
// the answer as a QuickPick or a document. Result shapes: server/features/commands.py.
import { posix } from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  Location as LspLocation,
  SymbolInformation,
  WorkspaceSymbol,
  WorkspaceSymbolRequest,
} from 'vscode-languageclient/node';
import { livePick, reveal, snippet, Target, TargetItem } from './picker';
import type { ProjectStatus } from './status';

interface SearchHit {
  location: LspLocation;
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  matchType: string;
  sources: string[];
  symbol: string;
  kind: string;
  text: string;
  highlights: [number, number][];
  stale: boolean;
  /** The model whose vectors ranked the hit ("" when no vector source found it). */
  vectorModel: string;
}

interface SearchAnswer {
  hits: SearchHit[];
  report: { notes: string[]; millis: number; droppedByThreshold: number; vectorModel: string };
}

interface GrepPassage {
  path: string;
  startLine: number;
  matchLines: number[];
  matches: LspLocation[];
  text: string;
}

interface GrepAnswer {
  passages: GrepPassage[];
  truncated: boolean;
  reasons: string[];
}

interface Finding {
  name: string;
  location: LspLocation;
  path: string;
  startLine: number;
  relation: string;
  depth: number;
  via: string[];
}

interface ResearchAnswer {
  results: { findings: Finding[]; notes: string[] }[];
  markdown: string;
  notes: string[];
}

/** Markdown pages (status, research answers), rendered in VS Code's Markdown preview. Each is a
 *  file outside the workspace; a link to an absolute path (`/abs/app/auth.py#L17`, as the server
 *  writes them) is made relative to the page's folder, since the preview reads a leading `/` as
 *  the workspace folder's root. Clicking one opens the file at the line. */
export class Pages {
  constructor(private readonly dir: vscode.Uri) {}

  async show(name: string, markdown: string): Promise<void> {
    const uri = vscode.Uri.joinPath(this.dir, `${name.replace(/[\\/:*?"<>|]/g, '_')}.md`);
    await vscode.workspace.fs.createDirectory(this.dir);
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(relativeLinks(markdown, this.dir.path)));
    try {
      await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch {
      // No built-in Markdown extension: the source, then.
      await vscode.window.showTextDocument(uri, { preview: true });
    }
  }
}

/** Markdown links to absolute paths (`](/a/b.py#L3)`) made relative to the folder `from`. */
export function relativeLinks(markdown: string, from: string): string {
  const base = encodeURI(from);
  return markdown.replace(/\]\((\/[^)\s#]*)(#[^)\s]*)?\)/g, (_, target: string, fragment: string | undefined) => {
    return `](${posix.relative(base, target)}${fragment ?? ''})`;
  });
}

export class Commands {
  readonly pages: Pages;

  constructor(
    private readonly client: () => LanguageClient | undefined,
    pagesDir: vscode.Uri,
  ) {
    this.pages = new Pages(pagesDir);
  }

  private async run<T>(command: string, args: object, token?: vscode.CancellationToken): Promise<T> {
    const client = this.client();
    if (!client || !client.isRunning()) {
      throw new Error('the codesift server is not running (see codesift: Show Logs)');
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] }, token)) as T;
  }

  private uri(location: LspLocation): vscode.Uri {
    return vscode.Uri.parse(location.uri);
  }

  search(): void {
    livePick<TargetItem>({
      title: 'codesift: Search',
      placeholder: 'Describe what you are looking for, or type a name (grep + BM25 + vectors)',
      initial: selectedText(),
      fetch: async (query, token) => {
        const answer = await this.run<SearchAnswer>('codesift.search', { query }, token);
        const items = answer.hits.map((h) => this.hitItem(h));
        // The model whose vectors ranked the semantic source (the static tier's while MiniLM fills in).
        const model = answer.report.vectorModel;
        const title = model ? `codesift: Search — vectors: ${model}` : undefined;
        return { items, message: answer.report.notes.join('; ') || 'No results', title };
      },
    });
  }

  /** Go to Symbol in Workspace without VS Code's filter on the typed text: a description
   *  ("where are uploads retried") lists the definitions around the best search hits. */
  searchSymbols(): void {
    livePick<TargetItem>({
      title: 'codesift: Search Symbols by Description',
      placeholder: 'Describe the symbol ("where are uploads retried"), or type its name',
      initial: selectedText(),
      fetch: async (query, token) => {
        const client = this.client();
        if (!client || !client.isRunning()) throw new Error('the codesift server is not running (see codesift: Show Logs)');
        const found = (await client.sendRequest(WorkspaceSymbolRequest.type, { query }, token)) ?? [];
        return { items: found.flatMap((s) => this.symbolItem(s)), message: 'No symbols' };
      },
    });
  }

  private symbolItem(s: SymbolInformation | WorkspaceSymbol): TargetItem[] {
    if (!('range' in s.location)) return [];
    const uri = this.uri(s.location);
    const start = s.location.range.start;
    return [
      {
        label: `$(${symbolIcon(s.kind)}) ${s.name}`,
        description: [s.containerName, `${vscode.workspace.asRelativePath(uri)}:${start.line + 1}`].filter(Boolean).join(' · '),
        target: { uri, line: start.line, character: start.character },
      },
    ];
  }

  private hitItem(h: SearchHit): TargetItem {
    // Land on the first highlighted match when there is one, else on the chunk's first line.
    let line = h.startLine - 1;
    let character = 0;
    if (h.highlights.length > 0) {
      const before = h.text.slice(0, h.highlights[0][0]).split('\n');
      line += before.length - 1;
      character = before[before.length - 1].length;
    }
    const where = `${h.path}:${line + 1}`;
    return {
      label: where,
      description: [h.symbol, sourcesText(h), h.score.toFixed(2), h.stale ? 'stale' : ''].filter(Boolean).join(' · '),
      detail: snippet(h.text),
      target: { uri: this.uri(h.location), line, character },
    };
  }

  grep(): void {
    livePick<TargetItem>({
      title: 'codesift: Grep',
      placeholder: 'Literal text to find in the workspace (saved files and unsaved editors)',
      initial: selectedText(),
      fetch: async (pattern, token) => {
        const answer = await this.run<GrepAnswer>('codesift.grep', { pattern, context: 0, maxMatches: 500 }, token);
        const items: TargetItem[] = [];
        for (const p of answer.passages) {
          const lines = p.text.split('\n');
          for (const m of p.matches) {
            const line = m.range.start.line;
            items.push({
              label: `${p.path}:${line + 1}`,
              detail: (lines[line + 1 - p.startLine] ?? '').trim(),
              target: { uri: this.uri(m), line, character: m.range.start.character },
            });
          }
        }
        const note = answer.truncated ? 'truncated' : answer.reasons.join('; ');
        return { items, message: note || 'No matches' };
      },
    });
  }

  /** A question about the symbol under the cursor (offered as choices) or typed; the answer
   *  rendered, each location a link to the code. */
  async research(): Promise<void> {
    const question = await askResearch(symbolAtCursor());
    if (!question) return;
    const answer = await this.withProgress(`codesift: researching "${question}"`, () =>
      this.run<ResearchAnswer>('codesift.research', { question, links: true }),
    );
    if (!answer) return;
    const notes = answer.notes.map((n) => `> ${n}`).join('\n');
    await this.pages.show(`research — ${question}`, `${notes}${notes ? '\n\n' : ''}${answer.markdown || `# ${question}\n\n_Nothing found._`}\n`);
  }

  async callers(): Promise<void> {
    await this.findings('Callers', (name) => `what calls ${name}`);
  }

  async implementations(): Promise<void> {
    await this.findings('Implementations', (name) => `implementations of ${name}`);
  }

  /** Research findings about the symbol under the cursor (asked for only when there is none) as a pick list. */
  private async findings(what: string, question: (name: string) => string): Promise<void> {
    const name =
      symbolAtCursor() ??
      (await vscode.window.showInputBox({ title: `codesift: ${what}`, prompt: 'Symbol name (no symbol under the cursor)' }));
    if (!name) return;
    const answer = await this.withProgress(`codesift: ${what.toLowerCase()} of ${name}`, () =>
      this.run<ResearchAnswer>('codesift.research', { question: question(name) }),
    );
    if (!answer) return;
    const items: TargetItem[] = answer.results.flatMap((r) =>
      r.findings.map((f) => ({
        label: f.name,
        description: `${f.path}:${f.location.range.start.line + 1}`,
        detail: [f.relation, f.depth > 1 ? `depth ${f.depth}` : '', f.via.length ? `via ${f.via.join(' → ')}` : '']
          .filter(Boolean)
          .join(' · '),
        target: { uri: this.uri(f.location), line: f.location.range.start.line, character: f.location.range.start.character },
      })),
    );
    if (items.length === 0) {
      const notes = [...answer.notes, ...answer.results.flatMap((r) => r.notes)];
      void vscode.window.showInformationMessage(`codesift: no ${what.toLowerCase()} of ${name}${notes.length ? ` (${notes.join('; ')})` : ''}`);
      return;
    }
    const before = vscode.window.activeTextEditor;
    const selection = before?.selection; // a snapshot: the editor's own property follows the previews
    const picked = await vscode.window.showQuickPick(items, {
      title: `codesift: ${what} of ${name}`,
      matchOnDescription: true,
      onDidSelectItem: (item) => void reveal((item as TargetItem).target, true),
    });
    if (picked) {
      await reveal(picked.target, false);
    } else if (before) {
      // Dismissed after previewing: back to where the user was.
      await vscode.window.showTextDocument(before.document, { selection, viewColumn: before.viewColumn });
    }
  }

  async reindex(): Promise<void> {
    const answer = await this.withProgress('codesift: queueing a re-index', () =>
      this.run<{ queued: string[] }>('codesift.reindex', {}),
    );
    if (answer) void vscode.window.showInformationMessage(`codesift: re-indexing ${answer.queued.join(', ') || 'nothing (no folder open)'}`);
  }

  async status(): Promise<ProjectStatus[]> {
    const answer = await this.run<{ projects: ProjectStatus[] }>('codesift.status', {});
    return answer.projects;
  }

  async showStatus(serverOrigin: string): Promise<void> {
    const projects = await this.withProgress('codesift: status', () => this.status());
    if (!projects) return;
    const parts = [`# codesift status\n\nServer: \`${serverOrigin}\`\n`];
    for (const p of projects) {
      parts.push(
        `## ${p.root}\n\n` +
          `| Index | State |\n|---|---|\n` +
          `| activity | ${p.activity} |\n| index | ${p.exists ? 'built' : 'not built yet'} |\n` +
          `| files | ${p.filesIndexed} indexed, ${p.filesSkipped} skipped, ${p.filesFailed} failed |\n` +
          `| chunks | ${p.chunks} |\n| symbols | ${p.symbols} |\n` +
          `| vectors | ${p.vectorsDone} done, ${p.vectorsPending} pending (${p.model || 'no model yet'}) |\n`,
      );
      for (const [title, rows] of [['Failed', p.failed], ['Skipped', p.skipped]] as const) {
        const link = (path: string): string => `[${path}](${encodeURI(vscode.Uri.joinPath(vscode.Uri.file(p.root), path).path)})`; // made relative by Pages
        if (rows.length) parts.push(`### ${title}\n\n${rows.map((r) => `- ${link(r.path)}: ${r.reason}`).join('\n')}\n`);
      }
    }
    await this.pages.show('codesift status', parts.join('\n'));
  }

  private async withProgress<T>(title: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title }, work);
    } catch (err) {
      void vscode.window.showErrorMessage(`codesift: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }
}

/** "bm25 + semantic (static)": the sources that found a hit, the vector source marked when
 *  the static tier's vectors scored it (MiniLM still filling in). The title names the model. */
export function sourcesText(h: Pick<SearchHit, 'sources' | 'vectorModel'>): string {
  const fast = h.vectorModel.startsWith('static:');
  return h.sources.map((s) => (s === 'semantic' && fast ? 'semantic (static)' : s)).join(' + ');
}

function selectedText(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) return undefined;
  const text = editor.document.getText(editor.selection);
  return text.includes('\n') ? undefined : text;
}

/** The selected name, else the identifier under the cursor (its language's word pattern). */
function symbolAtCursor(): string | undefined {
  const selected = selectedText()?.trim();
  if (selected) return selected;
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const range = editor.document.getWordRangeAtPosition(editor.selection.active);
  const word = range ? editor.document.getText(range) : undefined;
  return word && /[\p{L}_$]/u.test(word) ? word : undefined;
}

/** The research question: choices about the symbol under the cursor, or any typed question. */
async function askResearch(symbol: string | undefined): Promise<string | undefined> {
  const choices: vscode.QuickPickItem[] = symbol
    ? [
        { label: `what calls ${symbol}`, description: 'callers, up the chain' },
        { label: `implementations of ${symbol}`, description: 'subclasses, implementers, extensions' },
        { label: `related to ${symbol}`, description: 'callers, callees, supertypes, subtypes, search hits' },
      ]
    : [];
  const pick = vscode.window.createQuickPick();
  pick.title = 'codesift: Research';
  pick.placeholder = 'e.g. "what calls login", "implementations of Store", "dependencies of module app.auth", "related to uploads"';
  pick.items = choices;
  pick.onDidChangeValue((value) => {
    const typed = value.trim();
    pick.items = typed ? [{ label: typed, description: 'ask this', alwaysShow: true }, ...choices] : choices;
  });
  return new Promise((resolve) => {
    let answer: string | undefined;
    pick.onDidAccept(() => {
      answer = pick.selectedItems[0]?.label ?? (pick.value.trim() || undefined);
      pick.hide();
    });
    pick.onDidHide(() => {
      pick.dispose();
      resolve(answer);
    });
    pick.show();
  });
}

/** The codicon for an LSP SymbolKind. */
function symbolIcon(kind: number): string {
  const names: Record<number, string> = {
    1: 'file', 2: 'module', 3: 'namespace', 4: 'package', 5: 'class', 6: 'method', 7: 'property', 8: 'field',
    9: 'constructor', 10: 'enum', 11: 'interface', 12: 'function', 13: 'variable', 14: 'constant',
    22: 'enum-member', 23: 'struct', 24: 'event', 25: 'operator', 26: 'type-parameter',
  };
  return `symbol-${names[kind] ?? 'misc'}`;
}

export type { Target };
