-- Headless Neovim 0.11 drives the codesift plugin (editors/neovim) against a real
-- `codesift serve`: setup{} → attach → progress on the statusline → :CodesiftSearch
-- to the quickfix list and to a stubbed vim.ui.select → :CodesiftGrep →
-- :CodesiftResearch → :CodesiftStatus → :CodesiftReindex → :checkhealth codesift.
-- Only the picker's UI is stubbed. Prints one JSON object on stdout; exits
-- non-zero on a timeout.
local root = assert(os.getenv('CODESIFT_WS'))
local plugin = assert(os.getenv('CODESIFT_PLUGIN'))
local cmd = vim.json.decode(assert(os.getenv('CODESIFT_CMD')))
local out = { statusline = {}, messages = {}, steps = {} }

local function finish(code)
  io.stdout:write(vim.json.encode(out) .. '\n')
  io.stdout:flush()
  vim.cmd(code == 0 and 'qall!' or 'cquit ' .. code)
end

local function step(name, ok)
  out.steps[name] = ok and true or false
  if not ok then
    out.failed_step = name
    finish(4)
  end
  return ok
end

-- Capture every message the plugin (and the LSP client) shows.
vim.notify = function(msg, level)
  table.insert(out.messages, { msg = msg, level = level })
end
local function messages_since(n, pattern)
  for i = n + 1, #out.messages do
    if out.messages[i].msg:find(pattern, 1, true) then
      return out.messages[i].msg
    end
  end
end

-- The picker's UI is the one stub: record what it offers, choose the first entry.
vim.ui.select = function(items, opts, on_choice)
  out.picker = { prompt = opts.prompt, shown = {} }
  for i, it in ipairs(items) do
    out.picker.shown[i] = opts.format_item(it)
  end
  on_choice(items[1], 1)
end

vim.opt.rtp:prepend(plugin)
vim.cmd.runtime('plugin/codesift.lua')
vim.cmd('filetype on')

-- Before setup: a command says there is no client instead of doing nothing.
local n = #out.messages
vim.cmd('CodesiftSearch anything')
out.before_setup = messages_since(n, 'codesift:')

require('codesift').setup({
  cmd = cmd,
  settings = { search = { semanticWeight = 0.9 } },
})
-- After setup, before any buffer of the workspace is open: still no client, and it says so.
n = #out.messages
vim.cmd('CodesiftGrep anything')
out.before_attach = messages_since(n, 'codesift:')

vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local value = ev.data.params.value
    table.insert(out.statusline, { kind = value.kind, line = require('codesift').statusline() })
  end,
})

vim.cmd.edit(root .. '/app/upload.py')
local function client()
  return vim.lsp.get_clients({ name = 'codesift', bufnr = 0 })[1]
end
out.attached = vim.wait(20000, function()
  local c = client()
  return c ~= nil and c.initialized
end, 20)
if not out.attached then
  return finish(2)
end
if not vim.wait(180000, function()
  return require('codesift').progress().state == 'ready'
end, 50) then
  return finish(3)
end
out.ready_line = require('codesift').statusline()
out.ready = require('codesift').progress()

local function qf_title(prefix)
  local t = vim.fn.getqflist({ title = 1 }).title
  return t:sub(1, #prefix) == prefix
end
local function qf_items()
  local items = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    table.insert(items, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, col = it.col, text = it.text })
  end
  return items
end

-- Search → quickfix list.
vim.cmd('CodesiftSearch! parse the JSON configuration')
step('search_qf', vim.wait(60000, function() return qf_title('codesift search:') end, 50))
out.search_qf = qf_items()
vim.cmd.cclose()

-- Search → picker (stubbed UI) → jump.
vim.cmd.edit(root .. '/app/upload.py')
out.picker = nil
vim.cmd('CodesiftSearch parse the JSON configuration')
step('search_picker', vim.wait(60000, function() return out.picker ~= nil end, 50))
out.search_picker = out.picker
out.jumped = { file = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0) }

-- Grep → quickfix list, one entry per matching line.
vim.cmd('CodesiftGrep! retry_upload')
step('grep_qf', vim.wait(60000, function() return qf_title('codesift grep:') end, 50))
out.grep_qf = qf_items()
vim.cmd.cclose()

-- Grep with no match: a message saying so, no silent nothing.
n = #out.messages
vim.cmd('CodesiftGrep zebra_pattern_nowhere')
step('grep_empty', vim.wait(60000, function() return messages_since(n, 'no match') ~= nil end, 50))
out.grep_empty = messages_since(n, 'no match')

-- Research → picker → jump to the caller.
vim.cmd.edit(root .. '/app/upload.py')
out.picker = nil
vim.cmd('CodesiftResearch what calls validateCredentials')
step('research', vim.wait(60000, function() return out.picker ~= nil end, 50))
out.research = out.picker
out.research_jumped = { file = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0) }

-- Status.
n = #out.messages
vim.cmd('CodesiftStatus')
step('status', vim.wait(60000, function() return messages_since(n, 'files indexed') ~= nil end, 50))
out.status = messages_since(n, 'files indexed')

-- Reindex: a new progress run, back to ready.
n = #out.messages
local runs = #out.statusline
vim.cmd('CodesiftReindex')
step('reindex_queued', vim.wait(60000, function() return messages_since(n, 're-indexing') ~= nil end, 50))
out.reindex = messages_since(n, 're-indexing')
step('reindex_done', vim.wait(180000, function()
  for i = runs + 1, #out.statusline do
    if out.statusline[i].kind == 'end' then
      return true
    end
  end
  return false
end, 50))
out.reindex_line = require('codesift').statusline()

-- Reindex one file, named relative to the current directory (the workspace).
n = #out.messages
vim.cmd('CodesiftReindex app/upload.py')
step('reindex_file', vim.wait(60000, function() return messages_since(n, 're-indexing') ~= nil end, 50))
out.reindex_file = messages_since(n, 're-indexing')
-- The file is re-indexed after the server's short debounce: :checkhealth reports what the
-- server is doing, so it reads the status once the server is idle again.
local function server_idle()
  local client = vim.lsp.get_clients({ name = 'codesift' })[1]
  if not client then
    return false
  end
  local res = client:request_sync(
    'workspace/executeCommand',
    { command = 'codesift.status', arguments = { vim.empty_dict() } },
    5000
  )
  if not res or res.err then
    return false
  end
  local line = require('codesift').format_status(res.result or {})[1] or ''
  return line:find(': idle', 1, true) ~= nil
end
step('reindex_file_done', vim.wait(60000, server_idle, 200))

-- :checkhealth codesift into a buffer we can read.
vim.cmd('checkhealth codesift')
out.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
finish(0)
