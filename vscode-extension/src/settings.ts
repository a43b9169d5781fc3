// The server's settings as VS Code holds them → the camelCase object the server expects
// (`{search: {semanticWeight: 0.9}}`), for initializationOptions, workspace/configuration
// and workspace/didChangeConfiguration.
//
// Only values the user set are sent: sending every default would override the
// workspace's own `[tool.codesift]` / `.codesift.toml`, which sit below the editor's layer.
import * as vscode from 'vscode';

/** Setting keys the server does not know: they configure the extension itself. */
const CLIENT_SECTIONS = new Set(['server', 'trace']);

export type ServerOptions = Record<string, Record<string, unknown>>;

/** `search.semanticWeight`-style keys of every server setting, from our package.json. */
export function serverSettingKeys(packageJSON: { contributes?: { configuration?: { properties?: object } } }): string[] {
  const properties = packageJSON.contributes?.configuration?.properties ?? {};
  return Object.keys(properties)
    .map((key) => key.slice('codesift.'.length))
    .filter((key) => !CLIENT_SECTIONS.has(key.split('.')[0]));
}

/** The settings the user set (at any level) for a resource, nested by section. */
export function explicitOptions(keys: string[], scope?: vscode.ConfigurationScope): ServerOptions {
  const config = vscode.workspace.getConfiguration('codesift', scope);
  const out: ServerOptions = {};
  for (const key of keys) {
    const seen = config.inspect(key);
    if (!seen) continue;
    const value =
      seen.workspaceFolderLanguageValue ??
      seen.workspaceLanguageValue ??
      seen.globalLanguageValue ??
      seen.workspaceFolderValue ??
      seen.workspaceValue ??
      seen.globalValue;
    if (value === undefined) continue;
    const [section, name] = key.split('.');
    (out[section] ??= {})[name] = value;
  }
  return out;
}
