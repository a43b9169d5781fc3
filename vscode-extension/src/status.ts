// The status-bar item: index progress while the server reports it ($/progress),
// the index's health otherwise. Click → codesift: Show Status.
import * as vscode from 'vscode';
import type { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageclient';

export interface ProjectStatus {
  root: string;
  exists: boolean;
  filesIndexed: number;
  filesSkipped: number;
  filesFailed: number;
  chunks: number;
  symbols: number;
  vectorsDone: number;
  vectorsPending: number;
  model: string;
  activity: string;
  skipped: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

export type Health = { kind: 'starting' } | { kind: 'missing' } | { kind: 'error'; message: string } | { kind: 'status'; projects: ProjectStatus[] };

type Progress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly running = new Map<ProgressToken, { title: string; percentage: number; message: string }>();
  private health: Health = { kind: 'starting' };

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem('codesift.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'codesift';
    this.item.command = command;
    this.render();
    this.item.show();
  }

  /** A `$/progress` notification; true when a run ended (the caller refreshes the health). */
  progress(token: ProgressToken, value: Progress): boolean {
    if (value.kind === 'begin') {
      this.running.set(token, { title: value.title, percentage: value.percentage ?? 0, message: value.message ?? '' });
    } else if (value.kind === 'report') {
      const run = this.running.get(token);
      if (run) {
        run.percentage = value.percentage ?? run.percentage;
        run.message = value.message ?? run.message;
      }
    } else {
      this.running.delete(token);
    }
    this.render();
    return value.kind === 'end';
  }

  setHealth(health: Health): void {
    this.health = health;
    this.render();
  }

  get indexing(): boolean {
    return this.running.size > 0;
  }

  private render(): void {
    this.item.backgroundColor = undefined;
    if (this.running.size > 0) {
      const runs = [...this.running.values()];
      const pct = Math.min(...runs.map((r) => r.percentage));
      this.item.text = `$(sync~spin) codesift: indexing ${pct}%`;
      this.item.tooltip = runs.map((r) => r.message || r.title).join('\n');
      return;
    }
    const h = this.health;
    if (h.kind === 'starting') {
      this.item.text = '$(loading~spin) codesift: starting';
      this.item.tooltip = 'Starting the codesift language server';
    } else if (h.kind === 'missing') {
      this.item.text = '$(warning) codesift: not installed';
      this.item.tooltip = 'The codesift language server was not found: click for how to install it';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else if (h.kind === 'error') {
      this.item.text = '$(error) codesift: error';
      this.item.tooltip = h.message;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else {
      const pending = h.projects.reduce((n, p) => n + p.vectorsPending, 0);
      const missing = h.projects.filter((p) => !p.exists).length;
      const chunks = h.projects.reduce((n, p) => n + p.chunks, 0);
      if (missing > 0) {
        this.item.text = '$(circle-slash) codesift: no index';
      } else if (pending > 0) {
        this.item.text = `$(watch) codesift: vectors pending (${pending})`;
      } else {
        this.item.text = '$(check) codesift: ready';
      }
      this.item.tooltip = h.projects
        .map((p) => `${p.root}: ${p.filesIndexed} files, ${p.chunks} chunks, ${p.vectorsDone} vectors — ${p.activity}`)
        .join('\n') || `${chunks} chunks`;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
