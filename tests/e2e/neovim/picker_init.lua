-- The init file of a real Neovim (a terminal UI inside tmux) for test_neovim_pickers.py:
-- the codesift plugin, the picker plugin under test on the runtimepath (none for
-- vim.ui.select), and helpers the test calls over --listen.
local plugin = assert(os.getenv('CODESIFT_PLUGIN'))
local cmd = vim.json.decode(assert(os.getenv('CODESIFT_CMD')))
local picker = assert(os.getenv('CODESIFT_PICKER'))
for dir in vim.gsplit(os.getenv('CODESIFT_PICKER_RTP') or '', ',', { trimempty = true }) do
  vim.opt.rtp:prepend(dir)
end
vim.opt.rtp:prepend(plugin)
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'I'
vim.cmd.runtime('plugin/codesift.lua')
vim.cmd('filetype on')
if picker == 'snacks' then
  require('snacks').setup({ picker = { enabled = true } })
end

require('codesift').setup({ cmd = cmd, picker = picker })

--- "ready" once the index is built and every chunk has its vector.
function _G.codesift_test_ready()
  local client = vim.lsp.get_clients({ name = 'codesift' })[1]
  if not client or not client.initialized then
    return 'starting'
  end
  local answer = client:request_sync('workspace/executeCommand', {
    command = 'codesift.status',
    arguments = { vim.empty_dict() },
  }, 5000, 0)
  local p = answer and answer.result and answer.result.projects and answer.result.projects[1]
  if not p or not p.exists or p.activity ~= 'idle' or p.vectorsPending > 0 or p.vectorsDone == 0 then
    return 'indexing'
  end
  return 'ready'
end

--- Where the cursor is: "path:line".
function _G.codesift_test_where()
  return vim.api.nvim_buf_get_name(0) .. ':' .. vim.fn.line('.')
end
