#!/bin/bash
# Completion for tokeninspect: the binary answers (tokeninspect ---complete CWORD WORD...).

_tokeninspect() {
    local -a reply
    # mapfile, not reply=($(…)): a candidate is one line, never split or globbed.
    mapfile -t reply < <("${COMP_WORDS[0]}" ---complete "${COMP_CWORD}" "${COMP_WORDS[@]}" 2>/dev/null)
    if [[ "${reply[0]}" == ":files" ]]; then
        # readline's own file completion: one candidate a file, quoted as it
        # inserts it (compgen's lines would split a name holding a newline).
        COMPREPLY=()
        compopt -o default 2>/dev/null
        return
    fi
    COMPREPLY=("${reply[@]:1}")
    # A directory is completed further, not ended with a space.
    local candidate
    for candidate in "${COMPREPLY[@]}"; do
        [[ "${candidate}" == */ ]] && compopt -o nospace && break
    done
}

complete -F _tokeninspect tokeninspect
