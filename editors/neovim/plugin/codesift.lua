-- User commands of the codesift plugin. They exist once the plugin is on the
-- runtimepath; the server starts only after require('codesift').setup{}.
if vim.g.loaded_codesift then
  return
end
vim.g.loaded_codesift = true

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts)
end

-- With no argument, each asks for one (vim.ui.input).
command('CodesiftSearch', function(o)
  local codesift = require('codesift')
  codesift.with_argument(o.args, 'codesift search: ', nil, function(query)
    codesift.search(query, { quickfix = o.bang })
  end)
end, { nargs = '*', bang = true, desc = 'codesift: hybrid search (! → quickfix list)' })

command('CodesiftGrep', function(o)
  local codesift = require('codesift')
  codesift.with_argument(o.args, 'codesift grep: ', codesift.cword(), function(pattern)
    codesift.grep(pattern, { quickfix = o.bang })
  end)
end, { nargs = '*', bang = true, desc = 'codesift: exact grep (! → quickfix list)' })

command('CodesiftResearch', function(o)
  local codesift = require('codesift')
  codesift.with_argument(o.args, 'codesift research: ', codesift.research_default(), function(question)
    codesift.research(question, { quickfix = o.bang })
  end)
end, { nargs = '*', bang = true, desc = 'codesift: code research (! → quickfix list)' })

-- On the name given, else the word under the cursor, else one asked for.
for name, fn in pairs({ CodesiftCallers = 'callers', CodesiftImplementations = 'implementations' }) do
  command(name, function(o)
    local codesift = require('codesift')
    local word = vim.trim(o.args) ~= '' and o.args or codesift.cword()
    codesift.with_argument(word, ('codesift %s of: '):format(fn), nil, function(symbol)
      codesift[fn](symbol, { quickfix = o.bang })
    end)
  end, { nargs = '?', bang = true, desc = ('codesift: %s of the name under the cursor (! → quickfix list)'):format(fn) })
end

command('CodesiftReindex', function(o)
  require('codesift').reindex(o.fargs)
end, { nargs = '*', complete = 'file', desc = 'codesift: re-index the workspace, or the given files' })

command('CodesiftStatus', function()
  require('codesift').show_status()
end, { nargs = 0, desc = 'codesift: index status' })
