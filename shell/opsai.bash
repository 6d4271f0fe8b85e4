# shellcheck shell=bash
# opsai: the Ctrl-G widget for bash 4.0 or newer.
#
# Install with `eval "$(opsai init bash)"` in ~/.bashrc. `opsai init` fills in the path of the
# opsai binary and the key (`--key`, OPSAI_WIDGET_KEY; `--no-bind` only defines __opsai_widget,
# for `bind -x '"KEY": __opsai_widget'`).
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
# cannot change what these functions do. bash 3.2 (macOS's /bin/bash) has no READLINE_LINE, so a
# key binding cannot read or replace the line there: the script says so and binds nothing.

# The last command's status, kept in case a prompt framework changes $? before the widget runs.
__opsai_save_status() {
    __opsai_last_status=$?
}

# The last 10 history lines, oldest first, without the numbers. Not `fc -l`: inside $(...) it
# leaves out the newest entry (bash takes it for the fc command itself).
__opsai_history() {
    [[ ${OPSAI_NO_HISTORY-} == 1 ]] && \builtin return 0
    \builtin local HISTTIMEFORMAT='' line
    while IFS= \builtin read -r line; do
        # "  123  command" (a `*` after the number marks an edited entry); continuation lines as they are.
        if [[ $line =~ ^\ *[0-9]+[*\ ]\ (.*)$ ]]; then
            line=${BASH_REMATCH[1]}
        fi
        \builtin printf '%s\n' "${line}"
    done < <(\builtin history 10)
    \builtin return 0
}

__opsai_widget() {
    # The first statement: anything before it would replace $?. (Values after `\builtin local` are
    # quoted: called through `builtin`, it is an ordinary command and its arguments are split.)
    \builtin local entry_status="$?"
    \builtin local last_status="${entry_status}" orig="${READLINE_LINE}" point="${READLINE_POINT}"
    \builtin local cursor="${READLINE_POINT}" keymap=emacs shown out rc=0 old_trap max prefix lines
    [[ $last_status != 0 ]] || last_status=${__opsai_last_status:-0}
    # An empty line after a success asks nothing; after a failure it asks to fix the last command.
    if [[ -z $orig && $last_status == 0 ]]; then
        \builtin return 0
    fi
    if [[ -o vi ]]; then
        keymap='vi'
    fi
    if ((BASH_VERSINFO[0] < 5)); then
        # bash 4 counts READLINE_POINT in bytes; opsai counts characters.
        prefix=$(LC_ALL=C && \builtin printf '%s.' "${orig:0:point}")
        prefix=${prefix%.}
        cursor=${#prefix}
    fi

    # bash cleared the line before calling us: show what opsai is working on. opsai draws its
    # spinner at the cursor, after this text.
    shown=${orig%%$'\n'*}
    max=$((${COLUMNS:-80} - 12))
    if ((max < 10)); then
        max=10
    fi
    if ((${#shown} > max)); then
        shown="${shown:0:max-3}..."
    fi
    \builtin printf '\r\e[K(opsai: %s) ' "$shown" >/dev/tty

    # Without this, a Ctrl-C that reaches bash too throws the line away.
    old_trap=$(\builtin trap -p INT)
    \builtin trap ':' INT
    out=$(
        \builtin set +o pipefail
        __opsai_history | OPSAI_BUFFER=$orig OPSAI_CURSOR=$cursor OPSAI_SHELL=bash \
            OPSAI_SHELL_VERSION="${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}" \
            OPSAI_LAST_STATUS=$last_status OPSAI_KEYMAP=$keymap \
            \command __OPSAI_BIN__ widget 2>/dev/null
    ) || rc=$?
    if [[ -n $old_trap ]]; then
        \builtin eval "$old_trap"
    else
        \builtin trap - INT
    fi
    \builtin printf '\r\e[K' >/dev/tty

    if [[ $rc == 0 && -n $out ]]; then
        READLINE_LINE=$out
        READLINE_POINT=${#out}
        if ((BASH_VERSINFO[0] < 5)); then
            READLINE_POINT=$(LC_ALL=C && \builtin printf '%s' "${#out}")
        fi
        \builtin return 0
    fi
    READLINE_LINE=$orig
    READLINE_POINT=$point
    if [[ $rc == 130 ]]; then
        \builtin return 0
    fi
    if [[ $rc == 0 ]]; then
        out='opsai: no command came back'
    fi
    # bash redraws the whole prompt below the message (for 124): go up to the prompt's first line
    # and clear from there, so a multi-line prompt leaves no stale copy above the message. bash
    # cleared the line, so the cursor is on the prompt's last line. Needs ${PS1@P} (bash 4.4).
    lines=''
    if [[ -n ${PS1-} ]] && ((BASH_VERSINFO[0] > 4 || BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4)); then
        lines=${PS1@P}
        lines=${lines//[!$'\n']/}
    fi
    if [[ -n $lines ]]; then
        \builtin printf '\e[%dA' "${#lines}" >/dev/tty
    fi
    \builtin printf '\r\e[J%s\n' "${out:-opsai: failed (exit $rc)}" >/dev/tty
    # 124: bash redraws the whole prompt (below the message), not only its last line.
    \builtin return 124
}

# One line on stderr when the key already does something the user chose, in the keymap in use.
# For another key than Ctrl-G only the user's own bindings (`bind -x` commands and macros) count.
# Ctrl-G's stock binding is abort in emacs mode (self-insert in vi-insert, where only the user's
# own bindings are checked). `bind -p` is slow (3 ms), so it runs only to name a foreign function.
__opsai_warn_if_taken() {
    \builtin local key="$1" all user bound=
    all=$'\n'$(
        \builtin bind -X
        \builtin bind -s
        \builtin printf '@@\n'
        \builtin bind -q abort || \builtin true
    )$'\n'
    user=${all%%$'\n'@@$'\n'*}$'\n'
    if [[ $user == *$'\n'"\"$key\": "* ]]; then
        bound=${user#*$'\n'"\"$key\": "}
        bound=${bound%%$'\n'*}
        [[ $bound == '"__opsai_widget"' ]] && \builtin return 0
    elif [[ $key != '\C-g' || -o vi || $all == *'"\C-g"'[,.]* ]]; then
        \builtin return 0
    elif [[ $'\n'$(\builtin bind -p) =~ $'\n''"\C-g": '([^$'\n']*) ]]; then
        bound=${BASH_REMATCH[1]}
    else
        \builtin return 0
    fi
    \builtin printf 'opsai: %s was bound to %s; it now opens the opsai widget %s\n' "$key" "$bound" \
        '(choose another key with --key or OPSAI_WIDGET_KEY, or use --no-bind)' >&2
}

__opsai_init() {
    \builtin local key=__OPSAI_KEY__ bind=__OPSAI_BIND__ map prompt_command
    if ((BASH_VERSINFO[0] < 4)); then
        \builtin printf '%s\n' "opsai: the Ctrl-G widget needs bash 4.0 or newer (this is $BASH_VERSION); use zsh, or a newer bash (brew install bash)" >&2
        \builtin unset -f __opsai_save_status __opsai_history __opsai_widget __opsai_warn_if_taken
        \builtin return 0
    fi

    # The status hook goes first, so it sees the command's status before other hooks change it.
    # PROMPT_COMMAND may be an array from bash 5.1 on; before that only its first element runs.
    if [[ ${PROMPT_COMMAND[*]-} != *__opsai_save_status* ]]; then
        if ((BASH_VERSINFO[0] > 5 || BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1)) &&
            [[ -n ${PROMPT_COMMAND+set} && ${PROMPT_COMMAND@a} == *a* ]]; then
            PROMPT_COMMAND=(__opsai_save_status "${PROMPT_COMMAND[@]}")
        else
            prompt_command=${PROMPT_COMMAND-}
            # Leading blanks or semicolons would make `__opsai_save_status;;...` a syntax error.
            prompt_command=${prompt_command#"${prompt_command%%[![:space:];]*}"}
            # shellcheck disable=SC2178 # a string here on purpose: bash < 5.1 runs only a string
            PROMPT_COMMAND="__opsai_save_status${prompt_command:+;$prompt_command}"
        fi
    fi

    [[ $bind == 1 ]] || \builtin return 0
    # No line editor (a script, `bash -c`): nothing to bind.
    [[ -o emacs || -o vi ]] || \builtin return 0
    __opsai_warn_if_taken "$key"
    for map in emacs vi-insert vi-command; do
        # Remove first: re-binding a `bind -x` key breaks other bindings in bash 5.1.
        \builtin bind -m "$map" -r "$key"
        \builtin bind -m "$map" -x "\"$key\": __opsai_widget"
    done
}

__opsai_init
\builtin unset -f __opsai_init
