--- :checkhealth codesift
local M = {}

local health = vim.health

--- The server command with `serve …` replaced by `--version` ({'codesift', '--version'}).
local function version_cmd(cmd)
  local out = {}
  for _, arg in ipairs(cmd) do
    if arg == 'serve' then
      table.insert(out, '--version')
      return out
    end
    table.insert(out, arg)
  end
  return nil
end

local function check_neovim()
  local v = vim.version()
  local text = ('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok(text)
  else
    health.error(text .. ': codesift needs 0.11 or newer (vim.lsp.config / vim.lsp.enable)')
  end
end

local function check_executable(cmd)
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(('%q is not executable'):format(exe), {
      'pip install codesift (or pipx install codesift), then restart Neovim',
      "or point setup{ cmd = { '/path/to/codesift', 'serve' } } at it",
    })
    return
  end
  health.ok(('%s found: %s'):format(exe, vim.fn.exepath(exe)))
  local vcmd = version_cmd(cmd)
  if not vcmd then
    health.info('cmd has no "serve" argument; version not checked: ' .. table.concat(cmd, ' '))
    return
  end
  local ok, res = pcall(function()
    return vim.system(vcmd, { text = true }):wait(30000)
  end)
  if ok and res.code == 0 then
    health.ok('version: ' .. vim.trim(res.stdout))
  else
    local why = ok and vim.trim((res.stderr or '') .. (res.stdout or '')) or tostring(res)
    health.warn(('%s failed: %s'):format(table.concat(vcmd, ' '), why))
  end
end

local function check_index(client)
  local res, err = client:request_sync(
    'workspace/executeCommand',
    { command = 'codesift.status', arguments = { vim.empty_dict() } },
    30000
  )
  if not res then
    health.warn('codesift.status did not answer: ' .. tostring(err))
    return
  end
  if res.err then
    health.warn('codesift.status failed: ' .. (res.err.message or vim.inspect(res.err)))
    return
  end
  local projects = (res.result or {}).projects or {}
  if #projects == 0 then
    health.warn('no workspace folder is open: nothing is indexed')
  end
  local lines = require('codesift').format_status(res.result or {})
  for i, p in ipairs(projects) do
    if not p.exists then
      health.warn('index: ' .. lines[i], { 'wait for indexing to finish, or run :CodesiftReindex' })
    elseif (p.filesFailed or 0) > 0 then
      health.warn('index: ' .. lines[i], { ':CodesiftStatus and `codesift status --all` list the files and why' })
    else
      health.ok('index: ' .. lines[i])
    end
  end
end

local function check_clients()
  local clients = vim.lsp.get_clients({ name = 'codesift' })
  if #clients == 0 then
    health.warn('no codesift client is running', {
      'open a file inside a workspace (a folder with one of the root markers)',
      'the server log: :lua vim.cmd.edit(vim.lsp.get_log_path())',
    })
    return
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    local bufs = #vim.lsp.get_buffers_by_client_id(client.id)
    local text = ('client %d attached to %d buffer(s), root %s, server %s %s'):format(
      client.id,
      bufs,
      client.root_dir or '(none)',
      info.name or '?',
      info.version or '?'
    )
    if client.initialized then
      health.ok(text)
      check_index(client)
    else
      health.warn(text .. ' — not initialized yet')
    end
  end
end

function M.check()
  health.start('codesift')
  check_neovim()
  local codesift = require('codesift')
  local cfg = codesift.config
  if not cfg then
    health.warn("setup() has not been called", { "require('codesift').setup{} in your init.lua" })
    check_executable({ 'codesift', 'serve' })
    return
  end
  health.ok(('setup() done: cmd = %s, results to %s'):format(table.concat(cfg.cmd, ' '), cfg.results))
  local picker = require('codesift.pickers').resolve(cfg.picker)
  if cfg.picker ~= 'auto' and cfg.picker ~= 'select' and not pcall(require, cfg.picker == 'fzf-lua' and 'fzf-lua' or cfg.picker) then
    health.warn(('picker %q is set but not installed: results fall back to vim.ui.select'):format(cfg.picker))
  else
    health.ok(('picker: %s%s'):format(picker == 'select' and 'vim.ui.select' or picker, cfg.picker == 'auto' and ' (auto)' or ''))
  end
  check_executable(cfg.cmd)
  check_clients()
  local p = codesift.progress()
  health.info(('statusline: %q (%s)'):format(codesift.statusline(), p.state))
end

return M
