--- Result lists in the picker the user has: telescope, fzf-lua or snacks.picker (each
--- with a preview of the code at the hit), else vim.ui.select. One function per picker,
--- each taking the same entries (see results.lua) and calling `on_choice(entry)`.
local M = {}

M.names = { 'telescope', 'fzf-lua', 'snacks', 'select' }

--- "0.52" for a search score, "" when the entry has none.
local function score(item)
  return item.score and ('%.2f'):format(item.score) or ''
end

local function sources(item)
  return #item.sources > 0 and ('[' .. table.concat(item.sources, ', ') .. ']') or ''
end

--- One line: path:line  symbol  snippet  [sources] score (the parts an entry has).
---@return string
function M.label(item)
  local parts = { ('%s:%d'):format(item.path, item.lnum) }
  for _, part in ipairs({ item.symbol or '', item.text, sources(item), score(item) }) do
    if part ~= '' then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, '  ')
end

--- What the user's fuzzy filter matches on: everything shown.
local function ordinal(item)
  return M.label(item)
end

local function telescope(items, opts)
  local pickers = require('telescope.pickers')
  local finders = require('telescope.finders')
  local conf = require('telescope.config').values
  local actions = require('telescope.actions')
  local state = require('telescope.actions.state')
  pickers
    .new({}, {
      prompt_title = opts.title,
      finder = finders.new_table({
        results = items,
        entry_maker = function(item)
          return {
            value = item,
            display = M.label(item),
            ordinal = ordinal(item),
            filename = item.filename,
            lnum = item.lnum,
            col = item.col,
          }
        end,
      }),
      sorter = conf.generic_sorter({}),
      -- The file at the entry's line, highlighted.
      previewer = conf.grep_previewer({}),
      attach_mappings = function(bufnr)
        actions.select_default:replace(function()
          local entry = state.get_selected_entry()
          actions.close(bufnr)
          vim.cmd.stopinsert() -- the prompt's Insert mode must not follow into the file
          if entry then
            opts.on_choice(entry.value)
          end
        end)
        return true
      end,
    })
    :find()
end

local function fzf_lua(items, opts)
  local fzf = require('fzf-lua')
  -- "path:line:col:  …" lines (relative to the workspace, given as cwd): fzf-lua's builtin
  -- previewer opens the file at that line.
  local lines, by_place, cwd = {}, {}, nil
  for _, item in ipairs(items) do
    cwd = cwd or (item.filename:sub(-#item.path - 1) == '/' .. item.path and item.filename:sub(1, -#item.path - 2))
    local place = ('%s:%d:%d'):format(item.path, item.lnum, item.col)
    local rest = M.label(item):sub(#('%s:%d'):format(item.path, item.lnum) + 1)
    by_place[place] = by_place[place] or item
    table.insert(lines, place .. ':' .. rest)
  end
  fzf.fzf_exec(lines, {
    prompt = '> ',
    cwd = cwd or nil,
    previewer = 'builtin',
    file_icons = false,
    git_icons = false,
    fzf_opts = { ['--no-sort'] = true },
    winopts = { title = ' ' .. opts.title .. ' ' },
    actions = {
      ['default'] = function(selected)
        local place = selected and selected[1] and selected[1]:match('^(.-:%d+:%d+):')
        local item = place and by_place[place]
        if item then
          opts.on_choice(item)
        end
      end,
    },
  })
end

local function snacks(items, opts)
  local Snacks = require('snacks')
  local entries = {}
  for i, item in ipairs(items) do
    entries[i] = {
      idx = i,
      text = ordinal(item),
      file = item.filename,
      pos = { item.lnum, math.max(item.col - 1, 0) },
      end_pos = item.end_lnum and { item.end_lnum, 0 } or nil,
      value = item,
    }
  end
  Snacks.picker.pick({
    title = opts.title,
    items = entries,
    -- The server's order, not snacks' default (score, then shortest text).
    sort = { fields = { 'score:desc', 'idx' } },
    format = function(entry)
      local item = entry.value
      local out = { { ('%s:%d'):format(item.path, item.lnum), 'SnacksPickerFile' } }
      for _, part in ipairs({
        { item.symbol or '', 'SnacksPickerLabel' },
        { item.text, 'SnacksPickerComment' },
        { sources(item), 'SnacksPickerSpecial' },
        { score(item), 'SnacksPickerDimmed' },
      }) do
        if part[1] ~= '' then
          table.insert(out, { '  ' })
          table.insert(out, part)
        end
      end
      return out
    end,
    preview = 'file',
    confirm = function(picker, entry)
      picker:close()
      if entry then
        vim.schedule(function()
          opts.on_choice(entry.value)
        end)
      end
    end,
  })
end

local function select(items, opts)
  vim.ui.select(items, { prompt = opts.title, format_item = M.label, kind = 'codesift' }, function(choice)
    if choice then
      opts.on_choice(choice)
    end
    -- Neovim's own vim.ui.select (inputlist) holds the screen until a choice: only now
    -- is there room for a message.
    if opts.on_done then
      opts.on_done()
    end
  end)
end

--- Run `fn` once a picker has closed: back in Normal mode in an ordinary window after its
--- prompt's Insert (or fzf's Terminal) mode. A message echoed while the prompt is up is
--- hidden at once by "-- INSERT --".
local function after_close(fn)
  local entered = false
  local group = vim.api.nvim_create_augroup('codesift_picker', { clear = true })
  vim.api.nvim_create_autocmd({ 'ModeChanged', 'WinEnter', 'BufEnter' }, {
    group = group,
    callback = function()
      local mode = vim.api.nvim_get_mode().mode
      if mode:match('^[it]') then
        entered = true
        return
      end
      local floating = vim.api.nvim_win_get_config(0).relative ~= ''
      if entered and mode == 'n' and not floating and vim.bo.buftype == '' then
        -- A moment later: leaving Insert mode clears the command line once the screen is
        -- next drawn, which would take a message shown now with it.
        vim.defer_fn(fn, 100)
        vim.api.nvim_del_augroup_by_id(group) -- once (`return true` would drop one event's only)
      end
    end,
  })
end

local impl = { telescope = telescope, ['fzf-lua'] = fzf_lua, snacks = snacks, select = select }
local modules = { telescope = 'telescope', ['fzf-lua'] = 'fzf-lua', snacks = 'snacks' }

--- The picker to use: the configured one, or ('auto') the first installed of telescope,
--- fzf-lua, snacks.picker; vim.ui.select when none is.
---@param want string 'auto'|'telescope'|'fzf-lua'|'snacks'|'select'
---@return string
function M.resolve(want)
  if want ~= 'auto' then
    return want
  end
  for _, name in ipairs({ 'telescope', 'fzf-lua', 'snacks' }) do
    if pcall(require, modules[name]) then
      return name
    end
  end
  return 'select'
end

--- Show entries in a picker; `opts.on_choice(entry)` runs for the chosen one,
--- `opts.on_done()` once the list is closed (chosen or dismissed).
---@param items table[] entries (results.lua)
---@param opts { title: string, picker: string, on_choice: fun(item: table), on_done: fun()|nil }
---@return string the picker used
function M.pick(items, opts)
  local name = M.resolve(opts.picker or 'auto')
  local ok, err = pcall(impl[name], items, opts)
  if not ok then
    vim.notify(('codesift: the %s picker failed (%s); using vim.ui.select'):format(name, err), vim.log.levels.WARN)
    select(items, opts)
    return 'select'
  end
  if name ~= 'select' and opts.on_done then
    after_close(opts.on_done)
  end
  return name
end

return M
