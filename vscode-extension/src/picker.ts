// Live QuickPicks over the server's codesift.* commands: results follow the typed text
// (debounced), the active row is previewed in the editor, accepting opens it.
import * as vscode from 'vscode';

export interface Target {
  uri: vscode.Uri;
  line: number; // 0-based
  character: number;
}

export interface TargetItem extends vscode.QuickPickItem {
  target: Target;
}

export interface LivePickOptions<T extends TargetItem> {
  title: string;
  placeholder: string;
  initial?: string;
  debounceMs?: number;
  /** Results for the text; an empty list with a message to show when there are none; a
   *  title for these results (else the picker's own). */
  fetch(text: string, token: vscode.CancellationToken): Promise<{ items: T[]; message?: string; title?: string }>;
}

export async function reveal(target: Target, preview: boolean): Promise<void> {
  const position = new vscode.Position(target.line, target.character);
  const editor = await vscode.window.showTextDocument(target.uri, {
    preview,
    preserveFocus: preview,
    selection: new vscode.Range(position, position),
  });
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** A QuickPick whose rows are fetched again ~200 ms after the text stops changing. */
export function livePick<T extends TargetItem>(options: LivePickOptions<T>): void {
  const pick = vscode.window.createQuickPick<T | vscode.QuickPickItem>();
  pick.title = options.title;
  pick.placeholder = options.placeholder;
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  const before = vscode.window.activeTextEditor;
  const selection = before?.selection; // a snapshot: the editor's own property follows the previews
  let timer: NodeJS.Timeout | undefined;
  let running: vscode.CancellationTokenSource | undefined;
  let generation = 0;
  let accepted = false;
  let previewed = false;

  const run = (text: string): void => {
    running?.cancel();
    if (!text.trim()) {
      pick.items = [];
      pick.busy = false;
      return;
    }
    const mine = ++generation;
    const cts = new vscode.CancellationTokenSource();
    running = cts;
    pick.busy = true;
    options.fetch(text, cts.token).then(
      ({ items, message, title }) => {
        if (mine !== generation) return;
        pick.title = title ?? options.title;
        // alwaysShow: the server already chose and ranked the rows; the QuickPick must not filter them.
        pick.items = items.length > 0 ? items.map((i) => ({ ...i, alwaysShow: true })) : [{ label: message ?? 'No results', alwaysShow: true }];
        pick.busy = false;
      },
      (err: unknown) => {
        if (mine !== generation || cts.token.isCancellationRequested) return;
        pick.items = [{ label: `$(error) ${err instanceof Error ? err.message : String(err)}`, alwaysShow: true }];
        pick.busy = false;
      },
    );
  };

  pick.onDidChangeValue((text) => {
    clearTimeout(timer);
    timer = setTimeout(() => run(text), options.debounceMs ?? 200);
  });
  pick.onDidChangeActive((active) => {
    const item = active[0];
    if (item && 'target' in item) {
      previewed = true;
      void reveal(item.target, true);
    }
  });
  pick.onDidAccept(() => {
    const item = pick.selectedItems[0] ?? pick.activeItems[0];
    if (!item || !('target' in item)) return;
    accepted = true;
    pick.hide();
    void reveal(item.target, false);
  });
  pick.onDidHide(() => {
    clearTimeout(timer);
    running?.cancel();
    pick.dispose();
    // Dismissed after previewing: back to where the user was, without taking the focus
    // (another quick input may already be open).
    if (!accepted && previewed && before) {
      void vscode.window.showTextDocument(before.document, {
        selection,
        viewColumn: before.viewColumn,
        preserveFocus: true,
      });
    }
  });
  pick.show();
  if (options.initial) {
    pick.value = options.initial;
    run(options.initial);
  }
}

/** A one-line snippet: the first non-blank lines of a text, whitespace collapsed. */
export function snippet(text: string, maxChars = 160): string {
  const flat = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .join(' ⏎ ');
  return flat.length > maxChars ? `${flat.slice(0, maxChars - 1)}…` : flat;
}
