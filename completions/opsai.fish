# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_opsai_global_optspecs
    string join \n y/yes dry-run q/quiet json model= base-url= c/continue session= ssh-host= hosts= inventory= hosts-file= forks= serial= max-fail= contexts= h/help V/version
end

function __fish_opsai_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_opsai_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_opsai_using_subcommand
    set -l cmd (__fish_opsai_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c opsai -n "__fish_opsai_needs_command" -l model -d 'The model to use (overrides the config and OPSAI_MODEL)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l base-url -d 'The OpenAI-compatible endpoint (overrides the config and OPSAI_BASE_URL)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l session -d 'Continue the saved conversation with this id (`c12` or `12`; see `opsai sessions list`)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l ssh-host -d 'Run commands and file tools on this host through the system ssh (`~/.ssh/config` applies)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l hosts -d 'Run every command on the hosts this Ansible pattern selects (`web-*`, `@prod`, `db:&eu`)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l inventory -d 'An Ansible inventory file or directory (default: ANSIBLE_INVENTORY)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l hosts-file -d 'A file of host names, one per line, after the inventory and ~/.ssh/config' -r -F
complete -c opsai -n "__fish_opsai_needs_command" -l forks -d 'Hosts running at once (1-1024)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l serial -d 'A change goes on after its canary in batches of N hosts (default: the rest at once)' -r
complete -c opsai -n "__fish_opsai_needs_command" -l max-fail -d 'Stop a change once more than N hosts (or N% of them) have failed' -r
complete -c opsai -n "__fish_opsai_needs_command" -l contexts -d 'Run the Kubernetes tools on every kubeconfig context these globs select (`prod-*`, `a,b`)' -r
complete -c opsai -n "__fish_opsai_needs_command" -s y -l yes -d 'Approve medium-risk commands without asking (high always asks; refused with no terminal)'
complete -c opsai -n "__fish_opsai_needs_command" -l dry-run -d 'Plan only: print each action and its risk, execute nothing'
complete -c opsai -n "__fish_opsai_needs_command" -s q -l quiet -d 'Print only the final answer'
complete -c opsai -n "__fish_opsai_needs_command" -l json -d 'Print agent events as JSON lines on stdout'
complete -c opsai -n "__fish_opsai_needs_command" -s c -l continue -d 'Continue the last conversation in this directory (else the last one)'
complete -c opsai -n "__fish_opsai_needs_command" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_needs_command" -s V -l version -d 'Print version'
complete -c opsai -n "__fish_opsai_needs_command" -a "policy" -d 'Inspect the command risk policy; nothing runs'
complete -c opsai -n "__fish_opsai_needs_command" -a "config" -d 'Show or change the configuration (`opsai config path` says where it is)'
complete -c opsai -n "__fish_opsai_needs_command" -a "audit" -d 'Read the audit log: one line per action, approved or refused'
complete -c opsai -n "__fish_opsai_needs_command" -a "sessions" -d 'List, show or delete saved conversations'
complete -c opsai -n "__fish_opsai_needs_command" -a "init" -d 'Print the Ctrl-G widget for a shell: `eval "$(opsai init zsh)"`, `opsai init fish | source`'
complete -c opsai -n "__fish_opsai_needs_command" -a "widget" -d 'One widget request: print the replacement for the shell\'s line (the shell scripts call this)'
complete -c opsai -n "__fish_opsai_needs_command" -a "completions" -d 'Print shell completions for opsai'
complete -c opsai -n "__fish_opsai_needs_command" -a "man" -d 'Print the man page, or write every page into a directory (packaging runs this)'
complete -c opsai -n "__fish_opsai_needs_command" -a "explain" -d 'Explain piped output (`cmd | opsai explain [QUESTION]`), a command, or an ops object'
complete -c opsai -n "__fish_opsai_needs_command" -a "cache" -d 'The cache of generated analyze templates ($OPSAI_HOME/cache/analyze_templates.json)'
complete -c opsai -n "__fish_opsai_needs_command" -a "undo" -d 'Restore the file the last write_file/edit_file changed, from its backup'
complete -c opsai -n "__fish_opsai_needs_command" -a "sandbox" -d 'Run one command in the sandbox that commands running without a human yes get (read-only filesystem without secrets, no network), or show whether it works here (`--status`)'
complete -c opsai -n "__fish_opsai_needs_command" -a "doctor" -d 'Check the model endpoint step by step (DNS, TCP, TLS, proxy, HTTP, the model list, a streamed chat, a tool call, speed) and say what to fix; exit 1 when a step fails'
complete -c opsai -n "__fish_opsai_needs_command" -a "serve" -d 'The web chat for a team: serve the page and its API (`opsai serve`), or manage its users (`opsai serve user add NAME --role viewer|operator`)'
complete -c opsai -n "__fish_opsai_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and not __fish_seen_subcommand_from check help" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and not __fish_seen_subcommand_from check help" -f -a "check" -d 'Show how risky a shell command is and why (a command starting with `-` goes after `--`)'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and not __fish_seen_subcommand_from check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and __fish_seen_subcommand_from check" -l json -d 'Print the assessment as one JSON object'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "check" -d 'Show how risky a shell command is and why (a command starting with `-` goes after `--`)'
complete -c opsai -n "__fish_opsai_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "show" -d 'Print the configuration (the API key masked) and which values come from the environment'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "path" -d 'Print the path of the configuration file (`--all`: every directory opsai uses)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "set-llm" -d 'Choose a model provider interactively, test the connection, and save; with flags, set it without asking anything (`--base-url URL --model M --api-key-env VAR`)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "set" -d 'Set one key (`opsai config set exec.timeout_s 60`), checked as the file would be'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "get" -d 'Print one key\'s effective value on stdout, and on stderr where it comes from'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "unset" -d 'Remove one key from the file, so its default applies again'
complete -c opsai -n "__fish_opsai_using_subcommand config; and not __fish_seen_subcommand_from show path set-llm set get unset help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from path" -l all -d 'Print the layout: the config, data, state and cache directories and how they were chosen'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l base-url -d 'The OpenAI-compatible endpoint, such as https://api.openai.com/v1' -r
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l model -d 'The model name' -r
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l api-key-env -d 'Take the API key from this environment variable at start (saved as llm.api_key_env)' -r
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l api-key-cmd -d 'Take the API key from this command\'s first line of output, run through `sh -c` at start (saved as llm.api_key_cmd), such as \'pass show openai\'' -r
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l api-key-keyring -d 'Store the API key read from stdin in the OS keyring (service opsai, account the endpoint\'s host) and take it from there at start'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l no-api-key -d 'Use no API key (a local server)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -l check -d 'Test the connection (a one-token chat) before saving; nothing is saved when it fails'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set-llm" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from unset" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the configuration (the API key masked) and which values come from the environment'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the path of the configuration file (`--all`: every directory opsai uses)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set-llm" -d 'Choose a model provider interactively, test the connection, and save; with flags, set it without asking anything (`--base-url URL --model M --api-key-env VAR`)'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set one key (`opsai config set exec.timeout_s 60`), checked as the file would be'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print one key\'s effective value on stdout, and on stderr where it comes from'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "unset" -d 'Remove one key from the file, so its default applies again'
complete -c opsai -n "__fish_opsai_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand audit" -l tail -d 'Show the last N lines' -r
complete -c opsai -n "__fish_opsai_using_subcommand audit" -l grep -d 'Show only lines containing PAT (searches rotated logs too)' -r
complete -c opsai -n "__fish_opsai_using_subcommand audit" -l database -d 'Read the audit table `opsai serve --database URL` copies its lines to (every replica\'s), not this machine\'s audit file. Not read from OPSAI_DATABASE_URL: the terminal\'s own actions are only in the file' -r
complete -c opsai -n "__fish_opsai_using_subcommand audit" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and not __fish_seen_subcommand_from list show delete help" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and not __fish_seen_subcommand_from list show delete help" -f -a "list" -d 'The saved conversations, newest first'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and not __fish_seen_subcommand_from list show delete help" -f -a "show" -d 'A conversation\'s messages'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and not __fish_seen_subcommand_from list show delete help" -f -a "delete" -d 'Delete a conversation and its messages'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and not __fish_seen_subcommand_from list show delete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from list" -s n -l limit -d 'How many to show' -r
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from list" -l json -d 'One JSON object per line'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "list" -d 'The saved conversations, newest first'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "show" -d 'A conversation\'s messages'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a conversation and its messages'
complete -c opsai -n "__fish_opsai_using_subcommand sessions; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand init" -l key -d 'The key to bind (default Ctrl-G). Caret notation works in every shell (`^X^G`); the shell\'s own notation works too (bash `\\C-x\\C-g`, fish `\\cx\\cg`)' -r
complete -c opsai -n "__fish_opsai_using_subcommand init" -l bin -d 'The opsai the widget runs (default: this binary\'s absolute path). Packages write the scripts once with the installed path (`--bin /usr/bin/opsai`); `--bin opsai` looks it up in PATH' -r
complete -c opsai -n "__fish_opsai_using_subcommand init" -l no-bind -d 'Define the widget without binding a key (bind `opsai-widget` / `__opsai_widget` yourself)'
complete -c opsai -n "__fish_opsai_using_subcommand init" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l shell -d 'The shell that called: zsh, bash or fish' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l buffer -d 'The line being edited (prefer the OPSAI_BUFFER variable: argv is world-readable)' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l cursor -d 'The cursor position in characters' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l status -d 'The exit status of the last command the shell ran' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l shell-version -d 'The shell\'s version (`5.9`)' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l keymap -d 'The line editor\'s keymap: zsh `emacs`/`viins`/`vicmd`, bash `emacs`/`vi`, fish `emacs`/`default`/`insert`/`visual`' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -l model -d 'The model to use (overrides the config and OPSAI_MODEL)' -r
complete -c opsai -n "__fish_opsai_using_subcommand widget" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand completions" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand man" -l dir -d 'Write opsai.1 and one page per subcommand (opsai-config.1, …) here, and print their paths; without it, print opsai.1' -r -F
complete -c opsai -n "__fish_opsai_using_subcommand man" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand explain" -l model -d 'The model to use (overrides the config and OPSAI_MODEL)' -r
complete -c opsai -n "__fish_opsai_using_subcommand explain" -s q -l quiet -d 'Print only the explanation'
complete -c opsai -n "__fish_opsai_using_subcommand explain" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and not __fish_seen_subcommand_from list clear help" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and not __fish_seen_subcommand_from list clear help" -f -a "list" -d 'The cached templates: type, commands, when created, how often used'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and not __fish_seen_subcommand_from list clear help" -f -a "clear" -d 'Delete the cached templates (built-in templates are not affected)'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and not __fish_seen_subcommand_from list clear help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "list" -d 'The cached templates: type, commands, when created, how often used'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "clear" -d 'Delete the cached templates (built-in templates are not affected)'
complete -c opsai -n "__fish_opsai_using_subcommand cache; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand undo" -l session -d 'Undo the last change of this session (the SESSION field of the audit log: `c12`, or `12`) instead of the most recent change of any session' -r
complete -c opsai -n "__fish_opsai_using_subcommand undo" -l force -d 'Restore even when the file changed after opsai wrote it (those later changes are lost)'
complete -c opsai -n "__fish_opsai_using_subcommand undo" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand sandbox" -l ssh-host -d 'With --status: say which sandbox applies on this SSH host (opsai\'s own, bubblewrap, or none)' -r
complete -c opsai -n "__fish_opsai_using_subcommand sandbox" -l bench -d 'Benchmark: run CMD RUNS times plainly and RUNS times in the sandbox, alternating, from this one process (as the agent runs its commands), and print the medians (bench/sandbox.py)' -r
complete -c opsai -n "__fish_opsai_using_subcommand sandbox" -l status -d 'Print whether the sandbox can be applied on this machine, and why not; exit 1 when it cannot'
complete -c opsai -n "__fish_opsai_using_subcommand sandbox" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand doctor" -l model -d 'The model to check (overrides the config and OPSAI_MODEL)' -r
complete -c opsai -n "__fish_opsai_using_subcommand doctor" -l base-url -d 'The OpenAI-compatible endpoint to check (overrides the config and OPSAI_BASE_URL)' -r
complete -c opsai -n "__fish_opsai_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l listen -d 'The address to listen on (port 0: any free port). Anything but loopback needs users (--users, or users in --database), single sign-on or --allow-remote' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l users -d 'Log in with the users of this file (`opsai serve user add`) instead of one access token' -r -F
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l approval-timeout -d 'Seconds an approval waits for an operator in the browser before it counts as a refusal' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l public-host -d 'The name browsers reach this server by through a reverse proxy (`Host` header, NAME or NAME:PORT); repeatable. Without it only IP addresses and localhost are accepted' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l hosts -d 'Offer this host set (an Ansible pattern: `web-*`, `@prod`) to new conversations, whose commands then run on every host it selects; repeatable (docs/serve.md, "Host sets")' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l database -d 'Keep conversations, users and audit in this PostgreSQL database instead of `$OPSAI_HOME/sessions.db`, so several replicas behind one address serve the same team (docs/serve.md, "Postgres and replicas"). Best given in OPSAI_DATABASE_URL, with the password in PGPASSWORD or ~/.pgpass: the command line is visible to other users' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l inventory -d 'An Ansible inventory file or directory (default: ANSIBLE_INVENTORY)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l hosts-file -d 'A file of host names, one per line, after the inventory and ~/.ssh/config' -r -F
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l forks -d 'Hosts running at once (1-1024)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l serial -d 'A change goes on after its canary in batches of N hosts (default: the rest at once)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l max-fail -d 'Stop a change once more than N hosts (or N% of them) have failed' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l header-timeout -d 'Seconds a connection gets to send a request\'s headers (also how long an idle keep-alive connection is kept)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l body-timeout -d 'Seconds a request gets to send its whole body' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l idle-timeout -d 'Seconds a connection may go without a byte either way while a request is served (event streams send a keep-alive every 15 s)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l max-connections -d 'Connections open at once, in all (fewer when the open-files limit is lower)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l max-connections-per-ip -d 'Connections open at once from one client address [default: 256, and at most half of --max-connections]. Behind a reverse proxy every client has the proxy\'s address: set it to --max-connections there' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l max-turns -d 'Turns running at once on this server, for all users together (each user has at most 4)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l max-conversations -d 'Conversations one user may keep (then creating one is refused until some are deleted)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l trusted-proxy -d 'A reverse proxy whose `X-Forwarded-For` names the client (repeatable): the login and token limits then count each client\'s own address, not the proxy\'s' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-issuer -d 'Log in with this OpenID Connect issuer (its discovery document is read at start)' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-client-id -d 'The client id registered at the issuer for this server' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-redirect-url -d 'The redirect URL registered at the issuer [default: http://ADDRESS/api/v2/auth/sso/callback, ADDRESS the printed one; behind a TLS proxy give the https one]' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-role-claim -d 'The ID token claim holding the user\'s groups or roles' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-operator -d 'A claim value that makes an operator; repeatable' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-viewer -d 'A claim value that makes a viewer; repeatable; `*` lets in as a viewer everyone the issuer lets in. One of --oidc-operator or --oidc-viewer is required: nobody gets in by default' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l oidc-scope -d 'A scope to ask for beyond `openid profile email` (`groups` for a provider that puts the groups claim behind one); repeatable' -r
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l allow-remote -d 'Listen on a non-loopback address in token mode (put a TLS reverse proxy in front)'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -l secure-cookies -d 'Mark the session cookie `Secure` always (it is anyway on a request that came over https through a --public-host proxy, `X-Forwarded-Proto: https`)'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -f -a "user" -d 'Add, remove or list the users who may log in to `opsai serve --users FILE` (or, with --database URL, to every `opsai serve --database URL`), or import a users file there'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and not __fish_seen_subcommand_from user help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -s h -l help -d 'Print help'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -f -a "add" -d 'Add a user, or change an existing user\'s password and role. The password is asked twice on a terminal, or read from the first line of standard input'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -f -a "remove" -d 'Remove a user'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -f -a "list" -d 'List the users and their roles'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -f -a "import" -d 'Copy the users of a users file (names, roles, password hashes) into the database\'s users table: a user already there gets the file\'s role and password'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from user" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from help" -f -a "user" -d 'Add, remove or list the users who may log in to `opsai serve --users FILE` (or, with --database URL, to every `opsai serve --database URL`), or import a users file there'
complete -c opsai -n "__fish_opsai_using_subcommand serve; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "policy" -d 'Inspect the command risk policy; nothing runs'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "config" -d 'Show or change the configuration (`opsai config path` says where it is)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "audit" -d 'Read the audit log: one line per action, approved or refused'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "sessions" -d 'List, show or delete saved conversations'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "init" -d 'Print the Ctrl-G widget for a shell: `eval "$(opsai init zsh)"`, `opsai init fish | source`'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "widget" -d 'One widget request: print the replacement for the shell\'s line (the shell scripts call this)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "completions" -d 'Print shell completions for opsai'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "man" -d 'Print the man page, or write every page into a directory (packaging runs this)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "explain" -d 'Explain piped output (`cmd | opsai explain [QUESTION]`), a command, or an ops object'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "cache" -d 'The cache of generated analyze templates ($OPSAI_HOME/cache/analyze_templates.json)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "undo" -d 'Restore the file the last write_file/edit_file changed, from its backup'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "sandbox" -d 'Run one command in the sandbox that commands running without a human yes get (read-only filesystem without secrets, no network), or show whether it works here (`--status`)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "doctor" -d 'Check the model endpoint step by step (DNS, TCP, TLS, proxy, HTTP, the model list, a streamed chat, a tool call, speed) and say what to fix; exit 1 when a step fails'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "serve" -d 'The web chat for a team: serve the page and its API (`opsai serve`), or manage its users (`opsai serve user add NAME --role viewer|operator`)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and not __fish_seen_subcommand_from policy config audit sessions init widget completions man explain cache undo sandbox doctor serve help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "check" -d 'Show how risky a shell command is and why (a command starting with `-` goes after `--`)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "show" -d 'Print the configuration (the API key masked) and which values come from the environment'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print the path of the configuration file (`--all`: every directory opsai uses)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set-llm" -d 'Choose a model provider interactively, test the connection, and save; with flags, set it without asking anything (`--base-url URL --model M --api-key-env VAR`)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set" -d 'Set one key (`opsai config set exec.timeout_s 60`), checked as the file would be'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "get" -d 'Print one key\'s effective value on stdout, and on stderr where it comes from'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "unset" -d 'Remove one key from the file, so its default applies again'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "list" -d 'The saved conversations, newest first'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "show" -d 'A conversation\'s messages'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from sessions" -f -a "delete" -d 'Delete a conversation and its messages'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from cache" -f -a "list" -d 'The cached templates: type, commands, when created, how often used'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from cache" -f -a "clear" -d 'Delete the cached templates (built-in templates are not affected)'
complete -c opsai -n "__fish_opsai_using_subcommand help; and __fish_seen_subcommand_from serve" -f -a "user" -d 'Add, remove or list the users who may log in to `opsai serve --users FILE` (or, with --database URL, to every `opsai serve --database URL`), or import a users file there'
