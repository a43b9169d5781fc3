-- The plugin's workspace_root(): prints {name = root} as JSON; CODESIFT_PLUGIN is the plugin folder.
vim.opt.rtp:prepend(os.getenv('CODESIFT_PLUGIN'))
local codesift = require('codesift')
local base = os.getenv('CODESIFT_TREE')
local markers = { '.codesift.toml', '.codesift', '.git' }
local function root(file, cwd)
  return codesift.workspace_root(base .. '/' .. file, base .. '/' .. cwd, markers) or vim.NIL
end
local out = {
  -- scratch/.codesift above an unmarked folder the editor was opened in: the folder itself
  unmarked_below_index = root('scratch/tarball/src/a.py', 'scratch/tarball'),
  -- the same file opened from the scratch folder: the scratch index is the workspace
  opened_at_index = root('scratch/tarball/src/a.py', 'scratch'),
  -- a git checkout below the scratch index: its own .git wins
  checkout_below_index = root('scratch/repo/pkg/b.py', 'scratch/repo/pkg'),
  -- no marker anywhere: no workspace
  nowhere = root('plain/c.py', 'plain'),
}
local results = require('codesift.results')
out.notes_first = results.unseen_notes({ '3 files are not indexed', 'vectors pending' })
out.notes_again = results.unseen_notes({ '5 files are not indexed', 'vectors pending', 'new one' })
io.stdout:write(vim.json.encode(out) .. '\n')
vim.cmd('qall!')
