-- Neovim's built-in LSP client (0.7 and later), headless: open a file of the
-- example, read back the diagnostics ctxlint serves, apply the safe quick fix
-- of its CTX401 finding (its edit resolved lazily, as the client asks for
-- it), and read the diagnostics again. Everything it saw goes
-- to $CTXLINT_OUT as JSON; tests/server/test_neovim.py judges it.
local out = {}
local function finish()
  local f = io.open(os.getenv("CTXLINT_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("CTXLINT_FILE")))
  local id = vim.lsp.start_client({
    name = "ctxlint",
    cmd = { os.getenv("CTXLINT_PYTHON"), "-m", "ctxlint.cli", "server" },
    root_dir = os.getenv("CTXLINT_FOLDER"),
    init_options = { debounceMs = 50 },
  })
  vim.lsp.buf_attach_client(0, id)

  local function codes()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(0)) do
      local lsp = (d.user_data or {}).lsp or {}
      table.insert(found, { code = lsp.code or d.code, line = d.lnum + 1, severity = d.severity })
    end
    return found
  end

  out.attached = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  out.before = codes()

  local target
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local lsp = (d.user_data or {}).lsp or {}
    if (lsp.code or d.code) == "CTX401" then
      target = d
    end
  end
  if target == nil then
    return
  end
  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  local params = vim.lsp.util.make_range_params()
  -- as vim.lsp.buf.code_action() asks (0.7): the line's diagnostics, in LSP's shape
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics() }
  local replies = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 60000) or {}
  out.titles = {}
  local chosen
  for _, reply in pairs(replies) do
    if reply.err then
      out.code_action_error = vim.inspect(reply.err)
    end
    for _, action in ipairs(reply.result or {}) do
      table.insert(out.titles, action.title)
      if chosen == nil and action.title:find("^Fix CTX401 %(safe fix%)") then
        chosen = action
      end
    end
  end
  if chosen == nil then
    return
  end
  -- Neovim asks for the edit lazily (its client advertises resolveSupport):
  -- as vim.lsp.buf.code_action() does, resolve the chosen action when it has none
  out.lazy = chosen.edit == nil
  if chosen.edit == nil then
    local resolved = vim.lsp.buf_request_sync(0, "codeAction/resolve", chosen, 60000) or {}
    for _, reply in pairs(resolved) do
      if reply.err then
        out.resolve_error = vim.inspect(reply.err)
      elseif reply.result then
        chosen = reply.result
      end
    end
  end
  if chosen.edit == nil then
    return
  end
  vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
  out.text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  out.cleared = vim.wait(60000, function()
    for _, c in ipairs(codes()) do
      if c.code == "CTX401" then
        return false
      end
    end
    return true
  end, 50)
  out.after = codes()
end)
if not ok then
  out.error = tostring(err)
end
finish()
