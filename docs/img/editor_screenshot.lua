-- Neovim's built-in LSP client with `ctxlint server`, for the screenshot in
-- docs/server.md (docs/img/make_editor_screenshot.py runs it in a terminal of
-- fixed size). Steps, each when the last is on screen: open the file, wait for
-- the diagnostics, add an unsaved line with a new finding, wait for its error,
-- then put the cursor on a bag read and open the hover. $CTXLINT_READY is
-- written when the hover's window is open.
vim.cmd("syntax on")
vim.cmd("filetype on")
vim.o.termguicolors = true
vim.cmd("colorscheme desert")
-- desert leaves floats to 0.7's magenta Pmenu, and the lines past the end grey
vim.cmd("highlight NormalFloat guifg=White guibg=#262626")
vim.cmd("highlight FloatBorder guifg=#c2bfa5 guibg=#262626")
vim.cmd("highlight EndOfBuffer guifg=#6c6c6c guibg=grey20")
vim.o.number = true
vim.o.signcolumn = "yes"
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "F"
vim.diagnostic.config({
  -- the rule id before the message, as the diagnostic's code has it
  virtual_text = {
    format = function(d)
      local lsp = (d.user_data or {}).lsp or {}
      return (lsp.code and (lsp.code .. " ") or "") .. d.message
    end,
  },
  signs = true,
  underline = true,
  severity_sort = true,
})
vim.lsp.handlers["textDocument/hover"] = vim.lsp.with(
  vim.lsp.handlers.hover,
  { border = "rounded", max_width = 96 }
)

local NEW_LINE = os.getenv("CTXLINT_NEW_LINE")  -- the unsaved line (a seed read)
local AFTER = tonumber(os.getenv("CTXLINT_AFTER"))  -- inserted below this line
local HOVER = os.getenv("CTXLINT_HOVER")  -- the bag read's member, on the line below
local READY = os.getenv("CTXLINT_READY")
local TOP = 12  -- lines shown above the hovered one

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("CTXLINT_FILE")))
local id = vim.lsp.start_client({
  name = "ctxlint",
  cmd = { os.getenv("CTXLINT_PYTHON"), "-m", "ctxlint.cli", "server" },
  root_dir = os.getenv("CTXLINT_FOLDER"),
  init_options = { debounceMs = 50 },
})
vim.lsp.buf_attach_client(0, id)

local function errors()
  return #vim.diagnostic.get(0, { severity = vim.diagnostic.severity.ERROR })
end

local function when(ready, step, waited)
  waited = waited or 0
  if ready() then
    step()
  elseif waited < 120000 then
    vim.defer_fn(function() when(ready, step, waited + 100) end, 100)
  else
    vim.cmd("cquit 3")  -- never on screen: the script fails rather than shoot
  end
end

local function hover_open()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      return true
    end
  end
  return false
end

when(function() return #vim.diagnostic.get(0) > 0 end, function()
  local before = errors()
  vim.api.nvim_buf_set_lines(0, AFTER, AFTER, false, { NEW_LINE })
  when(function() return errors() > before end, function()
    local row = vim.fn.search("\\V" .. HOVER, "w")  -- the cursor on the read
    -- the lines above it (the new error, the pinned hints) stay in view, the
    -- hover opens below
    vim.fn.winrestview({ topline = math.max(row - TOP, 1) })
    vim.lsp.buf.hover()
    when(hover_open, function()
      vim.cmd("redraw")
      local f = io.open(READY, "w")
      f:write("ready")
      f:close()
    end)
  end)
end)
