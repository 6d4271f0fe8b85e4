# opsai: the Ctrl-G widget for fish 3.1 or newer.
#
# Install with `opsai init fish | source` in ~/.config/fish/config.fish. `opsai init` fills in the
# path of the opsai binary and the key (`--key`, OPSAI_WIDGET_KEY; `--no-bind` only defines
# __opsai_widget, for `bind KEY __opsai_widget`).
#
# Type what you want (or half a command) and press the key: the line becomes a command. Nothing
# runs until you press Enter. The protocol with `opsai widget` (DESIGN §9):
#   env    OPSAI_BUFFER OPSAI_CURSOR OPSAI_SHELL OPSAI_SHELL_VERSION OPSAI_LAST_STATUS OPSAI_KEYMAP
#          (the line goes in the environment, never in argv: argv is visible to everyone in `ps`)
#   stdin  the last 10 history lines, oldest first (none when OPSAI_NO_HISTORY=1 or in private mode)
#   stdout the new line; exit 0 = use it, 130 = cancelled (keep the line, say nothing),
#          anything else = keep the line and show stdout as a message
#
# Names are __opsai_*; builtins that a function could shadow are called as `builtin`. The script
# sticks to syntax fish 2.x parses (`; and`, no `VAR=value cmd`), so an old fish gets the one-line
# explanation instead of a parse error.

# The last command's status, kept in case something changes $status before the widget runs.
function __opsai_save_status --on-event fish_postexec
    set -g __opsai_last_status $status
end

# The last 10 history lines, oldest first.
function __opsai_history
    test "$OPSAI_NO_HISTORY" = 1; and return 0
    test -n "$fish_private_mode"; and return 0
    set -q history[1]; or return 0
    builtin printf '%s\n' $history[10..1]
end

function __opsai_widget --description 'opsai: turn the command line into a command'
    # The first statement: anything before it would replace $status.
    set -l entry_status $status
    set -l last_status $entry_status
    if test "$last_status" = 0; and set -q __opsai_last_status
        set last_status $__opsai_last_status
    end
    # One string, even for a multi-line buffer.
    set -l orig (builtin commandline | string collect)
    # An empty line after a success asks nothing; after a failure it asks to fix the last command.
    if test -z "$orig" -a "$last_status" = 0
        return 0
    end
    set -l cursor (builtin commandline -C)
    set -l keymap emacs
    if test "$fish_key_bindings" = fish_vi_key_bindings
        set keymap $fish_bind_mode
    end

    # opsai draws its spinner at the cursor, and `commandline -C` would only move the terminal's
    # cursor at the next repaint: move it to the end of its line ourselves (and back afterwards).
    set -l after (string sub -s (math $cursor + 1) -- "$orig")
    set -l right (string length -- "$after[1]")
    test "$right" -gt 0; and builtin printf '\e[%dC' $right >/dev/tty

    set -lx OPSAI_BUFFER "$orig"
    set -lx OPSAI_CURSOR $cursor
    set -lx OPSAI_SHELL fish
    set -lx OPSAI_SHELL_VERSION $version
    set -lx OPSAI_LAST_STATUS $last_status
    set -lx OPSAI_KEYMAP $keymap
    set -l out (__opsai_history | command __OPSAI_BIN__ widget 2>/dev/null | string collect)
    set -l rc $pipestatus[2]

    test "$right" -gt 0; and builtin printf '\e[%dD' $right >/dev/tty
    if test "$rc" = 0 -a -n "$out"
        builtin commandline -r -- "$out"
        builtin commandline -C (string length -- "$out")
    else
        builtin commandline -r -- "$orig"
        builtin commandline -C $cursor
        if test "$rc" != 130
            test "$rc" = 0; and set out 'opsai: no command came back'
            test -n "$out"; or set out "opsai: failed (exit $rc)"
            # fish repaints the whole prompt from the cursor up: pad below the message to make room
            # for its upper lines, and clear the old ones first when the cursor is surely on the
            # prompt's last line (one line of text that fits the screen; fish >= 3.5 for --visible).
            set -l prompt (fish_prompt)
            set -l up (math (builtin count $prompt) - 1)
            test $up -ge 0; or set up 0
            set -l width (string length --visible -- "$prompt[-1]" 2>/dev/null)
            if test $up -gt 0 -a -n "$width"; and not string match -q -- '*'\n'*' "$orig"
                and test (math $width + (string length -- "$orig")) -lt "$COLUMNS"
                builtin printf '\e[%dA' $up >/dev/tty
            end
            builtin printf '\r\e[J%s\n' "$out" >/dev/tty
            string repeat -N -n $up \n >/dev/tty
        end
    end
    builtin commandline -f repaint
end

function __opsai_init
    set -l key (string unescape -- __OPSAI_KEY__)
    set -l v (string match -r '^(\d+)\.(\d+)' -- $version)
    if not set -q v[3]; or test "$v[2]" -lt 3 -o \( "$v[2]" -eq 3 -a "$v[3]" -lt 1 \)
        builtin printf '%s\n' "opsai: the Ctrl-G widget needs fish 3.1 or newer (this is fish $version)" >&2
        builtin functions -e __opsai_save_status __opsai_history __opsai_widget
        return 0
    end
    test __OPSAI_BIND__ = 1; or return 0

    # Say so (one line) when the key already runs something the user bound: fish binds nothing to
    # Ctrl-G by default, and `bind --user` leaves out fish's own (preset) bindings.
    set -l taken
    for mode in default insert
        set -l current (builtin bind --user -M $mode $key 2>/dev/null)
        if set -q current[1]; and not string match -q -- '* __opsai_widget' $current[1]
            set -a taken $current[1]
        end
    end
    if set -q taken[1]
        builtin printf '%s\n' "opsai: "__OPSAI_KEY__" was bound ("(string join '; ' -- $taken)"); it now opens the opsai widget (choose another key with --key or OPSAI_WIDGET_KEY, or use --no-bind)" >&2
    end

    builtin bind -M default $key __opsai_widget
    builtin bind -M insert $key __opsai_widget
end

__opsai_init
builtin functions -e __opsai_init
