#!/bin/bash

__tokeninspect_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__tokeninspect_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__tokeninspect_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__tokeninspect_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_tokeninspect() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __tokeninspect_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    inspect|verify|mint|metadata|help)
        # Offer subcommand argument completions
        "_tokeninspect_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'inspect verify mint metadata help' -- "${cur}"))
        ;;
    esac
}

_tokeninspect_inspect() {
    repeating_flags=()
    non_repeating_flags=(--show-signed-bytes --allow-insecure-keys --rsa-pss --list-keys --repair-plus --version -h --help)
    repeating_options=(--param --key)
    non_repeating_options=(--format --color --key-password-file --now --leeway --jobs --kind --digest --profile --url --client-ip --key-id --secure-link-md5 --emit)
    __tokeninspect_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--format')
        __tokeninspect_add_completions -W 'text'$'\n''json'$'\n''jsonl'
        return
        ;;
    '--color')
        __tokeninspect_add_completions -W 'auto'$'\n''always'$'\n''never'
        return
        ;;
    '--param')
        return
        ;;
    '--key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--key-password-file')
        __tokeninspect_add_completions -f
        return
        ;;
    '--now')
        return
        ;;
    '--leeway')
        return
        ;;
    '--jobs')
        return
        ;;
    '--kind')
        __tokeninspect_add_completions -W 'software-statement'$'\n''signed-requestor-id'$'\n''user-metadata'$'\n''akamai'$'\n''cloudfront'$'\n''cat'$'\n''nginx-secure-link'
        return
        ;;
    '--digest')
        __tokeninspect_add_completions -W 'sha256'$'\n''sha1'
        return
        ;;
    '--profile')
        __tokeninspect_add_completions -f
        return
        ;;
    '--url')
        return
        ;;
    '--client-ip')
        return
        ;;
    '--key-id')
        return
        ;;
    '--secure-link-md5')
        return
        ;;
    '--emit')
        __tokeninspect_add_completions -W 'report'$'\n''xml'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __tokeninspect_add_completions -W "$(__tokeninspect_custom_complete ---completion inspect -- positional@0 "${COMP_CWORD}" "$(__tokeninspect_cursor_index_in_current_word)")"
        return
        ;;
    esac
}

_tokeninspect_verify() {
    repeating_flags=()
    non_repeating_flags=(--show-signed-bytes --allow-insecure-keys --rsa-pss --list-keys --reject-replays --insecure-skip-signature --version -h --help)
    repeating_options=(--param --key --mvpd)
    non_repeating_options=(--format --color --key-password-file --now --leeway --resource --requestor --fingerprint --device-id --jobs --kind --digest --profile --url --client-ip --key-id --secure-link-md5)
    __tokeninspect_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--format')
        __tokeninspect_add_completions -W 'text'$'\n''json'$'\n''jsonl'
        return
        ;;
    '--color')
        __tokeninspect_add_completions -W 'auto'$'\n''always'$'\n''never'
        return
        ;;
    '--param')
        return
        ;;
    '--key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--key-password-file')
        __tokeninspect_add_completions -f
        return
        ;;
    '--now')
        return
        ;;
    '--leeway')
        return
        ;;
    '--resource')
        return
        ;;
    '--requestor')
        return
        ;;
    '--mvpd')
        return
        ;;
    '--fingerprint')
        return
        ;;
    '--device-id')
        return
        ;;
    '--jobs')
        return
        ;;
    '--kind')
        __tokeninspect_add_completions -W 'software-statement'$'\n''signed-requestor-id'$'\n''user-metadata'$'\n''akamai'$'\n''cloudfront'$'\n''cat'$'\n''nginx-secure-link'
        return
        ;;
    '--digest')
        __tokeninspect_add_completions -W 'sha256'$'\n''sha1'
        return
        ;;
    '--profile')
        __tokeninspect_add_completions -f
        return
        ;;
    '--url')
        return
        ;;
    '--client-ip')
        return
        ;;
    '--key-id')
        return
        ;;
    '--secure-link-md5')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __tokeninspect_add_completions -W "$(__tokeninspect_custom_complete ---completion verify -- positional@0 "${COMP_CWORD}" "$(__tokeninspect_cursor_index_in_current_word)")"
        return
        ;;
    esac
}

_tokeninspect_mint() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __tokeninspect_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    token|software-statement|signed-requestor-id|metadata|cdn)
        # Offer subcommand argument completions
        "_tokeninspect_mint_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'token software-statement signed-requestor-id metadata cdn' -- "${cur}"))
        ;;
    esac
}

_tokeninspect_mint_token() {
    repeating_flags=()
    non_repeating_flags=(--allow-insecure-keys --closed-signature --pretty --version -h --help)
    repeating_options=(--field)
    non_repeating_options=(--key --kind --root --requestor --resource --mvpd --proxy-mvpd --session-guid --ttl --issue-time --fingerprint --device-id --encoding)
    __tokeninspect_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--kind')
        __tokeninspect_add_completions -W 'media'$'\n''authentication'$'\n''authorization'
        return
        ;;
    '--root')
        return
        ;;
    '--requestor')
        return
        ;;
    '--resource')
        return
        ;;
    '--mvpd')
        return
        ;;
    '--proxy-mvpd')
        return
        ;;
    '--session-guid')
        return
        ;;
    '--ttl')
        return
        ;;
    '--issue-time')
        return
        ;;
    '--fingerprint')
        return
        ;;
    '--device-id')
        return
        ;;
    '--field')
        return
        ;;
    '--encoding')
        __tokeninspect_add_completions -W 'raw'$'\n''base64'$'\n''base64url'
        return
        ;;
    esac
}

_tokeninspect_mint_software-statement() {
    repeating_flags=()
    non_repeating_flags=(--allow-insecure-keys --version -h --help)
    repeating_options=(--aud --claim)
    non_repeating_options=(--key --kid --software-id --software-version --iss --sub --issue-time --ttl --jti --jwks-out)
    __tokeninspect_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--kid')
        return
        ;;
    '--software-id')
        return
        ;;
    '--software-version')
        return
        ;;
    '--iss')
        return
        ;;
    '--sub')
        return
        ;;
    '--aud')
        return
        ;;
    '--issue-time')
        return
        ;;
    '--ttl')
        return
        ;;
    '--jti')
        return
        ;;
    '--claim')
        return
        ;;
    '--jwks-out')
        __tokeninspect_add_completions -f
        return
        ;;
    esac
}

_tokeninspect_mint_signed-requestor-id() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--key --key-password-file --requestor --digest)
    __tokeninspect_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--key-password-file')
        __tokeninspect_add_completions -f
        return
        ;;
    '--requestor')
        return
        ;;
    '--digest')
        __tokeninspect_add_completions -W 'sha256'$'\n''sha1'
        return
        ;;
    esac
}

_tokeninspect_mint_metadata() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--data --encrypt)
    non_repeating_options=(--encrypt-to --updated --scheme)
    __tokeninspect_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--encrypt-to')
        __tokeninspect_add_completions -f
        return
        ;;
    '--data')
        return
        ;;
    '--encrypt')
        return
        ;;
    '--updated')
        return
        ;;
    '--scheme')
        return
        ;;
    esac
}

_tokeninspect_mint_cdn() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--profile --resource --now --client-ip --requestor --lifetime --leeway)
    __tokeninspect_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--profile')
        __tokeninspect_add_completions -f
        return
        ;;
    '--resource')
        return
        ;;
    '--now')
        return
        ;;
    '--client-ip')
        return
        ;;
    '--requestor')
        return
        ;;
    '--lifetime')
        return
        ;;
    '--leeway')
        return
        ;;
    esac
}

_tokeninspect_metadata() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--decrypt-key --key-password-file --format)
    __tokeninspect_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--decrypt-key')
        __tokeninspect_add_completions -f
        return
        ;;
    '--key-password-file')
        __tokeninspect_add_completions -f
        return
        ;;
    '--format')
        __tokeninspect_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac
}

_tokeninspect_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __tokeninspect_offer_flags_options -1
}

complete -o filenames -F _tokeninspect tokeninspect
