# opsai: the Ctrl-G widget for zsh.
#
# Install with `eval "$(opsai init zsh)"` in ~/.zshrc. `opsai init` fills in the path of the opsai
# binary and the key (`--key`, OPSAI_WIDGET_KEY; `--no-bind` only defines the `opsai-widget` widget).
#
# Type what you want (or half a command) and press the key: the line becomes a command. Nothing
# runs until you press Enter. The protocol with `opsai widget` (DESIGN §9):
#   env    OPSAI_BUFFER OPSAI_CURSOR OPSAI_SHELL OPSAI_SHELL_VERSION OPSAI_LAST_STATUS OPSAI_KEYMAP
#          (the line goes in the environment, never in argv: argv is visible to everyone in `ps`)
#   stdin  the last 10 history lines, oldest first (none when OPSAI_NO_HISTORY=1)
#   stdout the new line; exit 0 = use it, 130 = cancelled (keep the line, say nothing),
#          anything else = keep the line and show stdout as a message
#
# Names are __opsai_* and every builtin is called as \builtin, so the user's aliases and functions
# cannot change what these functions do.

# The last command's status, kept in case a prompt framework changes $? before the widget runs.
__opsai_precmd() {
    __opsai_last_status=$?
}

# The last 10 history lines, oldest first.
__opsai_history() {
    [[ ${OPSAI_NO_HISTORY-} == 1 ]] || \builtin fc -ln -10 2>/dev/null
    \builtin return 0
}

__opsai_widget() {
    # The first statement: anything before it would replace $?.
    \builtin local -i __opsai_entry_status=$?
    \builtin emulate -L zsh
    \builtin setopt localtraps

    \builtin local -i last_status="$__opsai_entry_status" rc
    (( last_status )) || last_status=${__opsai_last_status:-0}
    # An empty line after a success asks nothing; after a failure it asks to fix the last command.
    [[ -z $BUFFER ]] && (( ! last_status )) && \builtin return 0

    \builtin local orig="$BUFFER" keymap="$KEYMAP" out
    \builtin local -i orig_cursor="$CURSOR"
    # `main` is a link to emacs or viins; say which.
    if [[ $keymap == main ]]; then
        keymap=emacs
        [[ $(\builtin bindkey -lL main) == *viins* ]] && keymap=viins
    fi

    # opsai draws its spinner at the cursor: put the cursor after the text, and redraw now.
    CURSOR=${#BUFFER}
    \builtin zle -R 'opsai: thinking... (Ctrl-C cancels)'
    # Without this, a Ctrl-C that reaches zsh too aborts the line editor and the line is lost.
    \builtin trap ':' INT
    out=$(__opsai_history | OPSAI_BUFFER=$orig OPSAI_CURSOR=$orig_cursor OPSAI_SHELL=zsh \
        OPSAI_SHELL_VERSION=$ZSH_VERSION OPSAI_LAST_STATUS=$last_status OPSAI_KEYMAP=$keymap \
        \command __OPSAI_BIN__ widget 2>/dev/null)
    rc=$?
    \builtin zle -R ''

    if (( rc == 0 )) && [[ -n $out ]]; then
        BUFFER=$out
        CURSOR=${#BUFFER}
    else
        BUFFER=$orig
        CURSOR=$orig_cursor
        if (( rc != 130 )); then
            (( rc == 0 )) && out='opsai: no command came back'
            \builtin zle -M -- "${out:-opsai: failed (exit $rc)}"
            # No reset-prompt after -M: it would wipe the message and draw the prompt a line too high.
            \builtin return 0
        fi
    fi
    \builtin zle reset-prompt
}

() {
    \builtin emulate -L zsh
    \builtin local key=__OPSAI_KEY__ bind=__OPSAI_BIND__ bound

    # First in line, so it sees the command's status before other hooks change it.
    \builtin typeset -ga precmd_functions
    precmd_functions=(__opsai_precmd ${precmd_functions:#__opsai_precmd})

    \builtin zle -N opsai-widget __opsai_widget
    [[ $bind == 1 ]] || \builtin return 0

    # Say so (one line) when the key already does something the user chose. Ctrl-G's stock
    # bindings are send-break (emacs) and list-expand (vi); for another key only the user's own
    # widgets and strings count, since zsh's built-in bindings are the stock ones.
    bound=${${(z)"$(\builtin bindkey -M main $key)"}[2]}
    case $bound in
        (opsai-widget|undefined-key) ;;
        (*)
            if [[ $key == '^G' && $bound != (send-break|list-expand) ]] ||
                [[ $key != '^G' && ${widgets[$bound]-} != builtin ]]; then
                \builtin print -ru2 -- "opsai: $key was bound to $bound; it now opens the opsai widget" \
                    "(choose another key with --key or OPSAI_WIDGET_KEY, or use --no-bind)"
            fi
            ;;
    esac

    \builtin local map
    for map in emacs viins vicmd; do
        \builtin bindkey -M $map $key opsai-widget
    done
    # Inside a ^R search the key cancels the search (as ^G does by default); bound only in the
    # main keymaps, it would end the search and send the found line to opsai.
    \builtin bindkey -M isearch $key send-break
}
