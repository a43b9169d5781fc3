-- User commands of the codesift plugin. They exist once the plugin is on the
-- runtimepath; the server starts only after require('codesift').setup{}.
if vim.g.loaded_codesift then
  return
end
vim.g.loaded_codesift = true

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts)
end

command('CodesiftSearch', function(o)
  require('codesift').search(o.args, { quickfix = o.bang })
end, { nargs = '+', bang = true, desc = 'codesift: hybrid search (! → quickfix list)' })

command('CodesiftGrep', function(o)
  require('codesift').grep(o.args, { quickfix = o.bang })
end, { nargs = '+', bang = true, desc = 'codesift: exact grep (! → quickfix list)' })

command('CodesiftResearch', function(o)
  require('codesift').research(o.args, { quickfix = o.bang })
end, { nargs = '+', bang = true, desc = 'codesift: code research (! → quickfix list)' })

command('CodesiftReindex', function(o)
  require('codesift').reindex(o.fargs)
end, { nargs = '*', complete = 'file', desc = 'codesift: re-index the workspace, or the given files' })

command('CodesiftStatus', function()
  require('codesift').show_status()
end, { nargs = 0, desc = 'codesift: index status' })
