--- codesift for Neovim 0.11: wires the built-in LSP client to `codesift serve`,
--- adds :CodesiftSearch / :CodesiftGrep / :CodesiftResearch / :CodesiftCallers /
--- :CodesiftImplementations / :CodesiftReindex / :CodesiftStatus, a statusline component fed by `$/progress`, and
--- `:checkhealth codesift`.
local results = require('codesift.results')

local M = {}

local NAME = 'codesift'

--- Defaults; `setup()` deep-merges the user's table over a copy.
local defaults = {
  cmd = { 'codesift', 'serve' },
  -- The nearest folder upwards holding one of these is the workspace codesift indexes
  -- (see M.workspace_root: an index alone above the working directory does not count).
  root_markers = { '.codesift.toml', '.codesift', '.git' },
  -- nil: attach to buffers of every filetype inside a workspace.
  filetypes = nil,
  -- Server settings, camelCase by section: { search = { semanticWeight = 0.9 } }.
  settings = {},
  -- Where :CodesiftSearch / :CodesiftGrep / :CodesiftResearch put results:
  -- 'picker' (vim.ui.select) or 'quickfix'. A bang (:CodesiftSearch!) always means quickfix.
  results = 'picker',
  -- Which picker: 'auto' (the first installed of telescope, fzf-lua, snacks.picker, else
  -- vim.ui.select), or one of 'telescope', 'fzf-lua', 'snacks', 'select'.
  picker = 'auto',
  -- Extra fields for every codesift.search / codesift.grep argument object,
  -- e.g. search = { limit = 30, mode = 'hybrid', filters = { include = { 'src/**' } } }.
  search = {},
  grep = {},
  -- Milliseconds a command waits before it gives up on the server.
  timeout_ms = 60000,
  on_attach = nil,
  capabilities = nil,
}

M.config = nil ---@type table|nil  the merged options once setup() ran

-- Index progress per client:
-- { [client_id] = { tokens = { [token] = { percentage =, message = } }, ended = bool, last_message = string } }
local progress = {}

local function notify(msg, level)
  vim.notify('codesift: ' .. msg, level or vim.log.levels.INFO)
end

local function is_empty(t)
  return type(t) ~= 'table' or next(t) == nil
end

--- Track `$/progress` of codesift clients for the statusline.
local function on_progress(ev)
  local client = vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= NAME then
    return
  end
  local params = ev.data.params or {}
  local value = params.value
  if type(value) ~= 'table' then
    return
  end
  local state = progress[client.id] or { tokens = {}, ended = false }
  progress[client.id] = state
  if value.kind == 'end' then
    state.tokens[params.token] = nil
    state.ended = true
    state.last_message = value.message
  else
    local prev = state.tokens[params.token] or {}
    state.tokens[params.token] = {
      percentage = value.percentage or prev.percentage,
      message = value.message or prev.message,
    }
  end
  vim.cmd.redrawstatus({ bang = true })
end

local function is_inside(path, folder)
  return path == folder or vim.fs.relpath(folder, path) ~= nil
end

--- The workspace a file belongs to: the nearest folder upwards holding a root marker,
--- except that an index alone (`.codesift`, no `.git` or `.codesift.toml` beside it)
--- in a folder above the editor's working directory never claims a file inside that
--- directory: the working directory is then the workspace. (A scratch folder's index
--- must not make an unrelated checkout below it part of the scratch workspace.)
---@param path string the buffer's file
---@param cwd string the editor's working directory
---@param markers string[] root markers
---@return string|nil root nil when the file is in no workspace
function M.workspace_root(path, cwd, markers)
  if path == '' then
    return nil
  end
  path, cwd = vim.fs.normalize(vim.fs.abspath(path)), vim.fs.normalize(vim.fs.abspath(cwd))
  -- One inner list: the markers have equal priority, so the nearest folder wins (a flat
  -- list would prefer an ancestor's first marker to a nearer .git).
  local root = vim.fs.root(path, { markers })
  if not root then
    return nil
  end
  root = vim.fs.normalize(root)
  local project = vim.uv.fs_stat(root .. '/.git') or vim.uv.fs_stat(root .. '/.codesift.toml')
  if not project and root ~= cwd and is_inside(cwd, root) and is_inside(path, cwd) then
    return cwd
  end
  return root
end

--- Configure and enable the codesift language server.
---@param opts table|nil see `defaults` above
function M.setup(opts)
  if vim.fn.has('nvim-0.11') ~= 1 then
    notify('needs Neovim 0.11 or newer (vim.lsp.config); see :checkhealth codesift', vim.log.levels.ERROR)
    return
  end
  local cfg = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if cfg.results ~= 'picker' and cfg.results ~= 'quickfix' then
    notify(("results must be 'picker' or 'quickfix', not %q; using 'picker'"):format(tostring(cfg.results)),
      vim.log.levels.WARN)
    cfg.results = 'picker'
  end
  if not vim.tbl_contains({ 'auto', 'telescope', 'fzf-lua', 'snacks', 'select' }, cfg.picker) then
    notify(("picker must be 'auto', 'telescope', 'fzf-lua', 'snacks' or 'select', not %q; using 'auto'"):format(
      tostring(cfg.picker)
    ), vim.log.levels.WARN)
    cfg.picker = 'auto'
  end
  M.config = cfg

  local lsp = {
    cmd = cfg.cmd,
    root_dir = function(bufnr, on_dir)
      local root = M.workspace_root(vim.api.nvim_buf_get_name(bufnr), vim.fn.getcwd(), cfg.root_markers)
      if root then
        on_dir(root)
      end
    end,
    filetypes = cfg.filetypes,
    -- Never index a lone file's folder (say, $HOME): only a real workspace.
    workspace_required = true,
    on_attach = cfg.on_attach,
    capabilities = cfg.capabilities,
  }
  -- An empty Lua table would travel as a JSON array, which the server rejects: send
  -- settings only when there are some (as initializationOptions and through
  -- workspace/configuration, section "codesift").
  if not is_empty(cfg.settings) then
    lsp.init_options = cfg.settings
    lsp.settings = { [NAME] = cfg.settings }
  end
  vim.lsp.config(NAME, lsp)
  vim.lsp.enable(NAME)

  local group = vim.api.nvim_create_augroup('codesift', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
end

--- The codesift client for the current buffer, else any running codesift client.
---@return vim.lsp.Client|nil client, string|nil why
function M.client()
  local here = vim.lsp.get_clients({ name = NAME, bufnr = 0 })
  if here[1] then
    return here[1]
  end
  local any = vim.lsp.get_clients({ name = NAME })
  if any[1] then
    return any[1]
  end
  if not M.config then
    return nil, "no codesift client: call require('codesift').setup{} first"
  end
  return nil,
    ('no codesift client is attached: open a file inside a workspace (a folder with %s) or see :checkhealth codesift')
      :format(table.concat(M.config.root_markers, ', '))
end

--- `workspace/executeCommand` with one argument object; `on_result(result, client)` on success.
local function execute(command, args, on_result)
  local client, why = M.client()
  if not client then
    notify(why, vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = { args } }
  local ok = client:request('workspace/executeCommand', params, function(err, result)
    if err then
      notify(('%s failed: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    on_result(result, client)
  end)
  if not ok then
    notify(command .. ': the server is not running', vim.log.levels.ERROR)
  end
end

local function target(opts)
  if opts and opts.quickfix then
    return 'quickfix'
  end
  return (M.config and M.config.results) or 'picker'
end

-- Run a server command and show its answer as a result list.
local function show(command, args, convert, opts, title, empty)
  execute(command, args, function(result, client)
    results.show(convert(result, client.offset_encoding), {
      to = target(opts),
      picker = (M.config and M.config.picker) or 'auto',
      title = title(result),
      empty = empty,
    })
  end)
end

--- Hybrid search; results to the picker or the quickfix list.
---@param query string
---@param opts table|nil { quickfix = bool, args = table (extra codesift.search fields) }
function M.search(query, opts)
  opts = opts or {}
  local args = vim.tbl_deep_extend('force', (M.config and M.config.search) or {}, opts.args or {}, { query = query })
  show('codesift.search', args, results.from_search, opts, function(result)
    return 'codesift search: ' .. query .. results.search_summary(result.report or {})
  end, ('no results for %q'):format(query))
end

--- Exact grep (literal unless args.regex); one entry per matching line.
---@param pattern string
---@param opts table|nil { quickfix = bool, args = table (extra codesift.grep fields) }
function M.grep(pattern, opts)
  opts = opts or {}
  local args = vim.tbl_deep_extend('force', (M.config and M.config.grep) or {}, opts.args or {}, { pattern = pattern })
  show('codesift.grep', args, results.from_grep, opts, function()
    return 'codesift grep: ' .. pattern
  end, ('no match for %q'):format(pattern))
end

--- Code research ("implementations of X", "what calls f()", "dependencies of module M").
---@param question string
---@param opts table|nil { quickfix = bool }
function M.research(question, opts)
  opts = opts or {}
  show('codesift.research', { question = question }, results.from_research, opts, function()
    return 'codesift research: ' .. question
  end, ('nothing found for %q'):format(question))
end

--- Callers of `name`, up the chain (the research question "what calls NAME").
---@param name string
---@param opts table|nil { quickfix = bool }
function M.callers(name, opts)
  show('codesift.research', { question = 'what calls ' .. name }, results.from_research, opts or {}, function()
    return 'codesift callers: ' .. name
  end, ('no callers of %q'):format(name))
end

--- Implementations of `name`: subclasses, implementers, extensions.
---@param name string
---@param opts table|nil { quickfix = bool }
function M.implementations(name, opts)
  show('codesift.research', { question = 'implementations of ' .. name }, results.from_research, opts or {}, function()
    return 'codesift implementations: ' .. name
  end, ('no implementations of %q'):format(name))
end

--- The argument a command was given, else one asked for with vim.ui.input (a command
--- with nothing to work on prompts rather than failing); `fn(text)` runs with it.
---@param args string the command's argument text
---@param prompt string
---@param default string|nil offered in the prompt
---@param fn fun(text: string)
function M.with_argument(args, prompt, default, fn)
  if vim.trim(args or '') ~= '' then
    return fn(args)
  end
  vim.ui.input({ prompt = prompt, default = default }, function(text)
    if text and vim.trim(text) ~= '' then
      fn(vim.trim(text))
    end
  end)
end

--- The identifier under the cursor ('' on none).
---@return string
function M.cword()
  local ok, word = pcall(vim.fn.expand, '<cword>')
  return ok and word:match('^[%w_]+$') and word or ''
end

--- The default research question: callers of the name under the cursor.
---@return string|nil
function M.research_default()
  local word = M.cword()
  return word ~= '' and ('what calls ' .. word) or nil
end

--- Re-index the workspace, or only some files (paths relative to cwd or absolute).
---@param paths string[]|nil
function M.reindex(paths)
  local client, why = M.client()
  if not client then
    return notify(why, vim.log.levels.WARN)
  end
  local rel = {}
  for _, p in ipairs(paths or {}) do
    local abs = vim.fs.normalize(vim.fn.fnamemodify(p, ':p'))
    local root = client.root_dir and vim.fs.normalize(client.root_dir)
    local inside = root and vim.fs.relpath(root, abs)
    if not inside then
      return notify(('%s is not inside the workspace %s'):format(p, root or '?'), vim.log.levels.WARN)
    end
    table.insert(rel, inside)
  end
  execute('codesift.reindex', { paths = rel }, function(result)
    local queued = table.concat(result.queued or {}, ', ')
    if queued == '' then
      return notify('nothing to re-index: no workspace folder is open', vim.log.levels.WARN)
    end
    if #rel > 0 then
      notify(('re-indexing %d file(s) in %s'):format(#rel, queued))
    else
      notify('re-indexing ' .. queued)
    end
  end)
end

--- One line per project of a `codesift.status` answer.
---@param result table
---@return string[]
function M.format_status(result)
  local lines = {}
  for _, p in ipairs(result.projects or {}) do
    local name = vim.fs.basename(p.root or '?')
    if not p.exists then
      table.insert(lines, ('%s: no index yet (%s)'):format(name, p.activity or '?'))
    else
      table.insert(
        lines,
        ('%s: %s — %d files indexed, %d skipped, %d failed; %d chunks, %d symbols; vectors %d/%d'):format(
          name,
          p.activity or '?',
          p.filesIndexed or 0,
          p.filesSkipped or 0,
          p.filesFailed or 0,
          p.chunks or 0,
          p.symbols or 0,
          p.vectorsDone or 0,
          (p.vectorsDone or 0) + (p.vectorsPending or 0)
        )
      )
    end
  end
  if #lines == 0 then
    table.insert(lines, 'no workspace folder is open')
  end
  return lines
end

--- :CodesiftStatus — what each project's index holds and what the server is doing.
function M.show_status()
  execute('codesift.status', vim.empty_dict(), function(result)
    notify(table.concat(M.format_status(result), '\n'))
  end)
end

--- Index state for custom statuslines.
--- (message: the running report, or once ready the last run's end message, e.g. "ws: indexed 5 files").
---@return { state: 'off'|'starting'|'indexing'|'idle'|'ready', percentage: integer|nil, message: string|nil }
function M.progress()
  local clients = vim.lsp.get_clients({ name = NAME })
  if #clients == 0 then
    return { state = 'off' }
  end
  local pct, message, indexing, ended, starting = nil, nil, false, false, false
  local last ---@type string|nil
  local running = {}
  for _, client in ipairs(clients) do
    running[client.id] = true
    if not client.initialized then
      starting = true
    end
    local st = progress[client.id]
    if st then
      ended = ended or st.ended
      last = last or st.last_message
      for _, t in pairs(st.tokens) do
        indexing = true
        message = message or t.message
        if t.percentage and (pct == nil or t.percentage < pct) then
          pct = t.percentage
        end
      end
    end
  end
  for id in pairs(progress) do
    if not running[id] then
      progress[id] = nil -- a stopped client's progress
    end
  end
  if indexing then
    return { state = 'indexing', percentage = pct, message = message }
  elseif starting then
    return { state = 'starting' }
  end
  return { state = ended and 'ready' or 'idle', message = last }
end

--- A statusline component: "codesift 40%" while indexing, "codesift ready" after,
--- "" when no codesift client runs. Use as `%{v:lua.require'codesift'.statusline()}`
--- (inside `%{}` the "%" needs no escaping).
---@return string
function M.statusline()
  local p = M.progress()
  if p.state == 'off' then
    return ''
  elseif p.state == 'indexing' then
    return p.percentage and ('codesift %d%%'):format(p.percentage) or 'codesift indexing'
  end
  return 'codesift ' .. p.state
end

return M
