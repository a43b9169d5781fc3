-- Headless Neovim 0.11: :CodesiftImplementations and :CodesiftCallers on the word under
-- the cursor (no prompt), with no word (a prompt), and with a bang (the quickfix list),
-- against a real `codesift serve`. vim.ui.select and vim.ui.input are the stubs: they
-- record what they were asked and answer as a user would. Prints one JSON object.
local root = assert(os.getenv('CODESIFT_WS'))
local plugin = assert(os.getenv('CODESIFT_PLUGIN'))
local cmd = vim.json.decode(assert(os.getenv('CODESIFT_CMD')))
local out = { messages = {}, steps = {} }

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

vim.notify = function(msg, level)
  table.insert(out.messages, { msg = msg, level = level })
end
vim.ui.select = function(items, opts, on_choice)
  out.picker = { prompt = opts.prompt, shown = {} }
  for i, it in ipairs(items) do
    out.picker.shown[i] = opts.format_item(it)
  end
  on_choice(items[1], 1)
end
vim.ui.input = function(opts, on_confirm)
  out.input = { prompt = opts.prompt, default = opts.default }
  on_confirm('validateCredentials')
end

vim.opt.rtp:prepend(plugin)
vim.cmd.runtime('plugin/codesift.lua')
vim.cmd('filetype on')
require('codesift').setup({ cmd = cmd, picker = 'select' })

vim.cmd.edit(root .. '/app/auth.py')
if not vim.wait(20000, function()
  local c = vim.lsp.get_clients({ name = 'codesift', bufnr = 0 })[1]
  return c ~= nil and c.initialized
end, 20) then
  return finish(2)
end
if not vim.wait(180000, function()
  return require('codesift').progress().state == 'ready'
end, 50) then
  return finish(3)
end

local function where()
  return { file = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0) }
end
-- Put the cursor on the first `word` in app/auth.py.
local function cursor_on(word)
  vim.cmd.edit(root .. '/app/auth.py')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.fn.search('\\<' .. word .. '\\>', 'cW')
  return vim.fn.expand('<cword>')
end
-- Run a command; what the picker showed, whether it prompted, where the choice landed.
local function picked(name, command)
  out.picker, out.input = nil, nil
  vim.cmd(command)
  step(name, vim.wait(60000, function() return out.picker ~= nil end, 50))
  out[name] = { picker = out.picker, input = out.input, jumped = where() }
end

-- :CodesiftImplementations on the base class under the cursor: its subclass, opened.
out.word_impl = cursor_on('AuthService')
picked('implementations', 'CodesiftImplementations')

-- :CodesiftCallers on the method under the cursor: AuthService.login, opened.
out.word_callers = cursor_on('validateCredentials')
picked('callers', 'CodesiftCallers')

-- No word under the cursor (a blank line): it asks for the name.
vim.cmd.edit(root .. '/app/auth.py')
vim.api.nvim_win_set_cursor(0, { 2, 0 })
out.blank_word = vim.fn.getline('.')
picked('prompted', 'CodesiftCallers')

-- A name given, with a bang: the quickfix list.
vim.cmd('CodesiftImplementations! AuthService')
step('implementations_qf', vim.wait(60000, function()
  return vim.fn.getqflist({ title = 1 }).title:find('codesift implementations:', 1, true) == 1
end, 50))
out.implementations_qf = {}
for _, it in ipairs(vim.fn.getqflist()) do
  table.insert(out.implementations_qf, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, text = it.text })
end

-- A name nothing implements: a message saying so.
local n = #out.messages
vim.cmd('CodesiftImplementations retry_upload')
step('none', vim.wait(60000, function()
  for i = n + 1, #out.messages do
    if out.messages[i].msg:find('no implementations', 1, true) then
      out.none = out.messages[i].msg
      return true
    end
  end
end, 50))
finish(0)
