--- codesift answers (workspace/executeCommand results) → entries, shown in a picker
--- (pickers.lua: telescope, fzf-lua, snacks.picker or vim.ui.select) or the quickfix
--- list. An empty answer always says why.
local pickers = require('codesift.pickers')

local M = {}

--- First non-blank line of a text, trimmed.
local function first_line(text)
  for line in (text or ''):gmatch('[^\n]+') do
    local trimmed = vim.trim(line)
    if trimmed ~= '' then
      return trimmed
    end
  end
  return ''
end

--- A byte column (0-based) from an LSP character offset on `line`.
local function byte_col(line, character, encoding)
  if not line or character == 0 then
    return 0
  end
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or character
end

--- A quickfix-shaped entry for an LSP location (0-based) plus what the picker shows.
local function entry(location, path, text, sources, line_text, encoding)
  local start = location.range.start
  return {
    filename = vim.uri_to_fname(location.uri),
    lnum = start.line + 1,
    col = byte_col(line_text, start.character, encoding) + 1,
    text = text,
    path = path,
    sources = sources or {},
  }
end

--- Why a search found nothing: the report's notes (pending vectors, what the
--- thresholds dropped…) and each source's count.
local function search_why(report)
  local parts = {}
  for _, n in ipairs(report.notes or {}) do
    table.insert(parts, n)
  end
  local counts = {}
  for source, n in pairs(report.perSource or {}) do
    table.insert(counts, ('%s %d'):format(source, n))
  end
  table.sort(counts)
  if #counts > 0 then
    table.insert(parts, 'per source: ' .. table.concat(counts, ', '))
  end
  return parts
end

--- " (3 hits in 2 files; bm25 3, grep 1, semantic 2; vectors: onnx:all-MiniLM-L6-v2-int8; 41 ms)"
--- for a title or prompt: the model is the one whose vectors ranked the semantic source.
function M.search_summary(report)
  local counts = {}
  for source, n in pairs(report.perSource or {}) do
    table.insert(counts, ('%s %d'):format(source, n))
  end
  table.sort(counts)
  local parts = { ('%d hits in %d files'):format(report.chunks or 0, report.uniqueFiles or 0) }
  if #counts > 0 then
    table.insert(parts, table.concat(counts, ', '))
  end
  if type(report.vectorModel) == 'string' and report.vectorModel ~= '' then
    table.insert(parts, 'vectors: ' .. report.vectorModel)
  end
  table.insert(parts, ('%d ms'):format(math.floor((report.millis or 0) + 0.5)))
  return ' (' .. table.concat(parts, '; ') .. ')'
end

--- The sources that found a hit; "semantic (static)" when the static tier's vectors
--- scored it (MiniLM still filling in). The search's title names the model.
local function hit_sources(hit)
  local static = type(hit.vectorModel) == 'string' and vim.startswith(hit.vectorModel, 'static:')
  local out = {}
  for _, source in ipairs(hit.sources or {}) do
    table.insert(out, (source == 'semantic' and static) and 'semantic (static)' or source)
  end
  return out
end

---@return { items: table, why: string[], notes: string[] }
function M.from_search(result, encoding)
  local items = {}
  for _, hit in ipairs(result.hits or {}) do
    local snippet = first_line(hit.text)
    local it = entry(hit.location, hit.path, snippet, hit_sources(hit), nil, encoding)
    it.symbol = (hit.symbol ~= '' and hit.symbol ~= vim.NIL) and hit.symbol or nil
    it.score = type(hit.score) == 'number' and hit.score or nil
    it.end_lnum = hit.location.range['end'].line + 1
    table.insert(items, it)
  end
  local report = result.report or {}
  return { items = items, why = search_why(report), notes = report.notes or {} }
end

---@return { items: table, why: string[], notes: string[] }
function M.from_grep(result, encoding)
  local items = {}
  for _, passage in ipairs(result.passages or {}) do
    local lines = vim.split(passage.text or '', '\n', { plain = true })
    local seen = {}
    for _, match in ipairs(passage.matches or {}) do
      local line = match.range.start.line -- 0-based
      if not seen[line] then
        seen[line] = true
        local text = lines[line + 1 - passage.startLine + 1] or ''
        table.insert(items, entry(match, passage.path, vim.trim(text), { 'grep' }, text, encoding))
      end
    end
  end
  local why = {}
  for _, r in ipairs(result.reasons or {}) do
    table.insert(why, r)
  end
  if result.truncated then
    table.insert(why, 'truncated: too many matches')
  end
  return { items = items, why = why, notes = why }
end

---@return { items: table, why: string[], notes: string[] }
function M.from_research(result, encoding)
  local items, notes = {}, {}
  for _, answer in ipairs(result.results or {}) do
    for _, f in ipairs(answer.findings or {}) do
      local text = ('%s %s'):format(f.relation or '', f.name or '')
      if f.via and #f.via > 0 then
        text = text .. ' (via ' .. table.concat(f.via, ' → ') .. ')'
      end
      table.insert(items, entry(f.location, f.path, vim.trim(text), { answer.kind }, nil, encoding))
    end
    local deps = answer.dependencies
    if deps ~= nil and deps ~= vim.NIL then
      for _, side in ipairs({ { 'imports', deps.imports }, { 'imported by', deps.importedBy } }) do
        for _, d in ipairs(side[2] or {}) do
          for _, loc in ipairs(d.locations or {}) do
            local path = vim.uri_to_fname(loc.uri)
            table.insert(items, entry(loc, path, side[1] .. ' ' .. d.name, { 'dependencies' }, nil, encoding))
          end
        end
      end
    end
    for _, n in ipairs(answer.notes or {}) do
      table.insert(notes, n)
    end
  end
  for _, n in ipairs(result.notes or {}) do
    table.insert(notes, n)
  end
  -- Nothing found and no note saying why: the answer's own text says it.
  if #items == 0 and #notes == 0 and result.markdown and result.markdown ~= '' then
    table.insert(notes, result.markdown)
  end
  return { items = items, why = notes, notes = notes }
end

--- How an entry reads in a picker: path:line  symbol  snippet  [sources]  score.
M.format = pickers.label

--- Open an entry's file at its line and column (the jump is recorded in the jumplist).
function M.jump(item)
  vim.cmd("normal! m'")
  vim.cmd.edit(vim.fn.fnameescape(item.filename))
  local last = vim.api.nvim_buf_line_count(0)
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(item.lnum, last), math.max(item.col - 1, 0) })
  vim.cmd('normal! zv')
end

local seen_notes = {} -- condition (the note with its numbers blanked) → true

--- The notes whose condition this session has not shown yet ("3 files are not
--- indexed" and "5 files are not indexed" are one condition); marks them shown.
---@param notes string[]
---@return string[]
function M.unseen_notes(notes)
  local out = {}
  for _, n in ipairs(notes) do
    local key = n:gsub('%d[%d,.]*', '#')
    if not seen_notes[key] then
      seen_notes[key] = true
      table.insert(out, n)
    end
  end
  return out
end

--- Show entries in the picker or the quickfix list; say why when there are none.
---@param answer { items: table, why: string[], notes: string[] } from from_search / from_grep / from_research:
---  `why` is shown when there are no entries, `notes` (e.g. "index still building") in any case
---@param opts { to: 'picker'|'quickfix', title: string, empty: string }
function M.show(answer, opts)
  local items, why, notes = answer.items, answer.why, answer.notes
  if #items == 0 then
    local msg = opts.empty
    if #why > 0 then
      msg = msg .. ': ' .. table.concat(why, '; ')
    end
    return M.note(msg, vim.log.levels.WARN)
  end
  -- Results came; the notes say what may be missing (index still building…), each
  -- condition once per session, and only once the list is closed: a message before a
  -- picker would stand between the user and it, one during it would be hidden.
  local fresh = M.unseen_notes(notes)
  local function say()
    if #fresh > 0 then
      vim.schedule(function()
        M.note(table.concat(fresh, '; '))
      end)
    end
  end
  if opts.to == 'quickfix' then
    local qf = {}
    for _, it in ipairs(items) do
      local sources = #it.sources > 0 and (' [' .. table.concat(it.sources, ', ') .. ']') or ''
      table.insert(qf, { filename = it.filename, lnum = it.lnum, col = it.col, text = it.text .. sources })
    end
    vim.fn.setqflist({}, ' ', { title = opts.title, items = qf })
    vim.cmd('botright copen')
    return say()
  end
  pickers.pick(items, { title = opts.title, picker = opts.picker or 'auto', on_choice = M.jump, on_done = say })
end

--- True when vim.notify is Neovim's own (it echoes in the command line) rather than a
--- plugin's (nvim-notify, snacks.notifier, noice, fidget…: windows of their own).
local function builtin_notify()
  local info = debug.getinfo(vim.notify, 'S')
  return info ~= nil and info.source:find('vim/_editor.lua', 1, true) ~= nil
end

--- A note via vim.notify, on one line. Neovim's own vim.notify echoes it, and an echo of
--- several lines or wider than the command line asks "Press ENTER": there it is cut to
--- the line's width (`:CodesiftStatus` says the rest).
---@param msg string
---@param level integer|nil vim.log.levels (INFO when nil)
function M.note(msg, level)
  msg = 'codesift: ' .. vim.trim((msg:gsub('%s*\n%s*', ' ')))
  if builtin_notify() then
    -- Draw what is pending first (after vim.ui.select's list, a full clear that would
    -- wipe the line at once).
    vim.cmd.redraw()
    local room = math.max(vim.v.echospace - 1, 10)
    if vim.fn.strdisplaywidth(msg) > room then
      msg = vim.fn.strcharpart(msg, 0, room - 1) .. '…'
    end
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

return M
