// The palette commands: each asks the server (workspace/executeCommand codesift.*) and shows
// the answer as a QuickPick or a document. Result shapes: server/features/commands.py.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, Location as LspLocation } from 'vscode-languageclient/node';
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
}

interface SearchAnswer {
  hits: SearchHit[];
  report: { notes: string[]; millis: number; droppedByThreshold: number };
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

/** Read-only markdown pages (status, research answers) under the `codesift:` scheme: no save prompts. */
export class Pages implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'codesift';
  private readonly pages = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.pages.get(uri.toString()) ?? '';
  }

  async show(name: string, markdown: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: Pages.scheme, path: `/${name.replace(/[\\/]/g, '_')}.md` });
    this.pages.set(uri.toString(), markdown);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}

export class Commands {
  readonly pages = new Pages();

  constructor(private readonly client: () => LanguageClient | undefined) {}

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
        return { items, message: answer.report.notes.join('; ') || 'No results' };
      },
    });
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
      description: [h.symbol, h.sources.join(' + '), h.score.toFixed(2), h.stale ? 'stale' : ''].filter(Boolean).join(' · '),
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

  async research(): Promise<void> {
    const question = await vscode.window.showInputBox({
      title: 'codesift: Research',
      prompt: 'e.g. "implementations of Store", "what calls login", "dependencies of module app.auth", "related to uploads"',
      value: selectedText(),
    });
    if (!question) return;
    const answer = await this.withProgress(`codesift: researching "${question}"`, () =>
      this.run<ResearchAnswer>('codesift.research', { question }),
    );
    if (!answer) return;
    const notes = answer.notes.map((n) => `> ${n}`).join('\n');
    await this.pages.show(`research: ${question}`, `${notes}${notes ? '\n\n' : ''}${answer.markdown || `# ${question}\n\n_Nothing found._`}\n`);
  }

  async callers(): Promise<void> {
    await this.findings('Callers', (name) => `what calls ${name}`);
  }

  async implementations(): Promise<void> {
    await this.findings('Implementations', (name) => `implementations of ${name}`);
  }

  /** Research findings about the symbol under the cursor (or a typed name) as a pick list. */
  private async findings(what: string, question: (name: string) => string): Promise<void> {
    const name = await vscode.window.showInputBox({
      title: `codesift: ${what}`,
      prompt: 'Symbol name',
      value: wordAtCursor() ?? selectedText(),
    });
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
    const picked = await vscode.window.showQuickPick(items, {
      title: `codesift: ${what} of ${name}`,
      matchOnDescription: true,
      onDidSelectItem: (item) => void reveal((item as TargetItem).target, true),
    });
    if (picked) await reveal(picked.target, false);
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
    const parts = [`# codesift status\n\nServer: ${serverOrigin}\n`];
    for (const p of projects) {
      parts.push(
        `## ${p.root}\n\n` +
          `| | |\n|---|---|\n` +
          `| activity | ${p.activity} |\n| index | ${p.exists ? 'built' : 'not built yet'} |\n` +
          `| files | ${p.filesIndexed} indexed, ${p.filesSkipped} skipped, ${p.filesFailed} failed |\n` +
          `| chunks | ${p.chunks} |\n| symbols | ${p.symbols} |\n` +
          `| vectors | ${p.vectorsDone} done, ${p.vectorsPending} pending (${p.model || 'no model yet'}) |\n`,
      );
      for (const [title, rows] of [['Failed', p.failed], ['Skipped', p.skipped]] as const) {
        if (rows.length) parts.push(`### ${title}\n\n${rows.map((r) => `- \`${r.path}\`: ${r.reason}`).join('\n')}\n`);
      }
    }
    await this.pages.show('status', parts.join('\n'));
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

function selectedText(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) return undefined;
  const text = editor.document.getText(editor.selection);
  return text.includes('\n') ? undefined : text;
}

function wordAtCursor(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const range = editor.document.getWordRangeAtPosition(editor.selection.active);
  return range ? editor.document.getText(range) : undefined;
}

export type { Target };
