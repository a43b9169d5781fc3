-- Headless Neovim 0.11 drives codesift: attach, wait for indexing, workspace/symbol,
-- codesift.search, an unsaved edit found by grep, a saved edit found by BM25.
-- Prints one JSON object on stdout; exits non-zero on a timeout.
local root = assert(os.getenv("CODESIFT_WS"))
local cmd = vim.json.decode(assert(os.getenv("CODESIFT_CMD")))
local out = { progress = {} }

local function finish(code)
  io.stdout:write(vim.json.encode(out) .. "\n")
  io.stdout:flush()
  vim.cmd(code == 0 and "qall!" or "cquit " .. code)
end

local indexed = false
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev)
    local value = ev.data.params.value
    table.insert(out.progress, value.kind)
    if value.kind == "end" then indexed = true end
  end,
})

vim.cmd.edit(root .. "/app/upload.py")
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = "codesift", cmd = cmd, root_dir = root })
out.attached = vim.wait(10000, function()
  local c = vim.lsp.get_client_by_id(id)
  return c ~= nil and c.initialized
end, 20)
if not out.attached then return finish(2) end
out.encoding = vim.lsp.get_client_by_id(id).offset_encoding
if not vim.wait(120000, function() return indexed end, 50) then return finish(3) end

local function request(method, params)
  local res = vim.lsp.buf_request_sync(buf, method, params, 30000) or {}
  local r = res[id] or {}
  if r.err then return { error = r.err } end
  return r.result
end

local function command(name, args)
  return request("workspace/executeCommand", { command = name, arguments = { args } })
end

out.symbols = request("workspace/symbol", { query = "AuthService" })
out.search = command("codesift.search", { query = "parse the JSON configuration", limit = 3 })

vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "", "def zebra_unsaved_helper():", "    return 1" })
out.grep = nil
vim.wait(5000, function()
  out.grep = command("codesift.grep", { pattern = "zebra_unsaved_helper" })
  return out.grep and out.grep.passages and #out.grep.passages > 0
end, 100)

vim.cmd.write()
local saved = os.clock()
out.saved_found = vim.wait(20000, function()
  local r = command("codesift.search", { query = "zebra_unsaved_helper", mode = "bm25" })
  out.bm25 = r
  return r and r.hits and #r.hits > 0 and r.hits[1].text:find("zebra_unsaved_helper", 1, true) ~= nil
end, 100)
out.save_to_searchable_cpu_s = os.clock() - saved
finish(0)
