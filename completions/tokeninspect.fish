# Completion for tokeninspect: the binary answers (tokeninspect ---complete CWORD WORD...).

function _tokeninspect
    set -l words (commandline -opc) (commandline -ct)
    set -l reply (command $words[1] ---complete (math (count $words) - 1) $words 2>/dev/null)
    if test "$reply[1]" = ":files"
        __fish_complete_path (commandline -ct)
        return
    end
    set -e reply[1]
    printf '%s\n' $reply
end

complete -c tokeninspect -f -a '(_tokeninspect)'
