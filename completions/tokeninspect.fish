function __tokeninspect_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __tokeninspect_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __tokeninspect_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __tokeninspect_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __tokeninspect_parse_tokens -S
    set -l unparsed_tokens (__tokeninspect_tokens -pc)
    switch $unparsed_tokens[1]
    case 'tokeninspect'
        __tokeninspect_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'inspect'
            __tokeninspect_parse_subcommand -r 1 'format=' 'show-signed-bytes' 'color=' 'param=+' 'key=+' 'key-password-file=' 'allow-insecure-keys' 'rsa-pss' 'list-keys' 'now=' 'leeway=' 'jobs=' 'kind=' 'digest=' 'profile=' 'url=' 'client-ip=' 'key-id=' 'secure-link-md5=' 'repair-plus' 'emit=' 'version' 'h/help'
        case 'verify'
            __tokeninspect_parse_subcommand -r 1 'format=' 'show-signed-bytes' 'color=' 'param=+' 'key=+' 'key-password-file=' 'allow-insecure-keys' 'rsa-pss' 'list-keys' 'now=' 'leeway=' 'resource=' 'requestor=' 'mvpd=+' 'fingerprint=' 'device-id=' 'reject-replays' 'insecure-skip-signature' 'jobs=' 'kind=' 'digest=' 'profile=' 'url=' 'client-ip=' 'key-id=' 'secure-link-md5=' 'version' 'h/help'
        case 'mint'
            __tokeninspect_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'token'
                __tokeninspect_parse_subcommand 0 'key=' 'allow-insecure-keys' 'kind=' 'root=' 'requestor=' 'resource=' 'mvpd=' 'proxy-mvpd=' 'session-guid=' 'ttl=' 'issue-time=' 'fingerprint=' 'device-id=' 'field=+' 'closed-signature' 'encoding=' 'pretty' 'version' 'h/help'
            case 'software-statement'
                __tokeninspect_parse_subcommand 0 'key=' 'allow-insecure-keys' 'kid=' 'software-id=' 'software-version=' 'iss=' 'sub=' 'aud=+' 'issue-time=' 'ttl=' 'jti=' 'claim=+' 'jwks-out=' 'version' 'h/help'
            case 'signed-requestor-id'
                __tokeninspect_parse_subcommand 0 'key=' 'key-password-file=' 'requestor=' 'digest=' 'version' 'h/help'
            case 'metadata'
                __tokeninspect_parse_subcommand 0 'encrypt-to=' 'data=+' 'encrypt=+' 'updated=' 'scheme=' 'version' 'h/help'
            case 'cdn'
                __tokeninspect_parse_subcommand 0 'profile=' 'resource=' 'now=' 'client-ip=' 'requestor=' 'lifetime=' 'leeway=' 'version' 'h/help'
            end
        case 'metadata'
            __tokeninspect_parse_subcommand 1 'decrypt-key=' 'key-password-file=' 'format=' 'version' 'h/help'
        case 'help'
            __tokeninspect_parse_subcommand -r 1 'version'
        end
    end
end

function __tokeninspect_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __tokeninspect_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __tokeninspect_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __tokeninspect_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__tokeninspect_tokens -p)
    if test -z "$(__tokeninspect_tokens -t)"
        set -l index (count (__tokeninspect_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'tokeninspect' -f
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect" -eq 1' -fa 'inspect' -d 'Decode and show every token, with no judgement (verifies too when --key is given).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect" -eq 1' -fa 'verify' -d 'Give every token a verdict: VALID_TOKEN or the first check it failed.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect" -eq 1' -fa 'mint' -d 'Issue a signed token or credential (for tests, samples and staging servers).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect" -eq 1' -fa 'metadata' -d 'Show user metadata and decrypt its encrypted values with the programmer\'s private key.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect inspect" -ge 1' -fka '(__tokeninspect_custom_completion ---completion inspect -- positional@0 (count (__tokeninspect_tokens -pc)) (__tokeninspect_tokens -tC))'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" format' -l 'format' -d 'Output: text for people, json (one array) or jsonl (one object per line).' -rfka 'text json jsonl'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" show-signed-bytes' -l 'show-signed-bytes' -d 'Also print the exact bytes the signature covers.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" color' -l 'color' -d 'Colour the text output: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always or never.' -rfka 'auto always never'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect"' -l 'param' -d 'The query parameter that holds the token when a whole URL or query string is given. Repeatable. (default: token, then auth)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect"' -l 'key' -d 'A trusted public key or certificate (PEM or DER), or a directory of them; for the SDK\'s other credentials also a JWKS or a PKCS#12 file. Repeatable.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" key-password-file' -l 'key-password-file' -d 'A file whose first line is the password of a PKCS#12 --key (software statements and signed requestor IDs only; else TOKENINSPECT_KEY_PASSWORD, a prompt on a terminal, or empty).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" allow-insecure-keys' -l 'allow-insecure-keys' -d 'Accept RSA keys under 2048 bits (old deployments used RSA-1024).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" rsa-pss' -l 'rsa-pss' -d 'Verify with RSA keys as RSA-PSS (SHA-256) instead of PKCS#1 v1.5.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" list-keys' -l 'list-keys' -d 'List the trusted keys loaded (type, file, SHA-256 fingerprint) on stderr.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" now' -l 'now' -d 'The time to check against: ISO 8601, or an epoch number (up to 11 digits seconds, as date +%s prints, more milliseconds). (default: the current time)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" leeway' -l 'leeway' -d 'Tolerated clock skew each way, in seconds. (default: 30)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" jobs' -l 'jobs' -d 'Verify with N threads (1 to 256); output stays in input order.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" kind' -l 'kind' -d 'Read every INPUT as this kind: software-statement, signed-requestor-id, user-metadata, or a CDN token: akamai, cloudfront, cat, nginx-secure-link. (default: detected from the form)' -rfka 'software-statement signed-requestor-id user-metadata akamai cloudfront cat nginx-secure-link'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" digest' -l 'digest' -d 'The digest of a signed requestor ID\'s RSA PKCS#1 v1.5 signature: sha256, or sha1 for old registrations.' -rfka 'sha256 sha1'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" profile' -l 'profile' -d 'CDN tokens: a CDN profile (as tokengate --cdn-profile reads it), which gives the kind, the keys, the token name and the secure-link expression.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" url' -l 'url' -d 'CDN tokens: the URL the edge was asked for. (default: the pasted URL)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" client-ip' -l 'client-ip' -d 'CDN tokens: the viewer\'s IP address, for a token bound to one.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" key-id' -l 'key-id' -d 'CDN tokens: the Key-Pair-Id (cloudfront) or kid (cat) the --key answers to. (default: the token\'s)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" secure-link-md5' -l 'secure-link-md5' -d 'CDN tokens: the edge\'s secure_link_md5 expression, the secret written $secret, for an nginx-secure-link --key (the secret file).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" repair-plus' -l 'repair-plus' -d 'Read a Base64 token whose \'+\' arrived as a space (an unencoded query string) as if repaired, with a warning.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" emit' -l 'emit' -d 'What to write: report (the decoded fields, as --format says) or xml (each decoded token as it is, for xmllint; with --show-signed-bytes only the exact bytes the signature covers, for openssl dgst -verify).' -rfka 'report xml'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect inspect" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect verify" -ge 1' -fka '(__tokeninspect_custom_completion ---completion verify -- positional@0 (count (__tokeninspect_tokens -pc)) (__tokeninspect_tokens -tC))'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" format' -l 'format' -d 'Output: text for people, json (one array) or jsonl (one object per line).' -rfka 'text json jsonl'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" show-signed-bytes' -l 'show-signed-bytes' -d 'Also print the exact bytes the signature covers.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" color' -l 'color' -d 'Colour the text output: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always or never.' -rfka 'auto always never'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify"' -l 'param' -d 'The query parameter that holds the token when a whole URL or query string is given. Repeatable. (default: token, then auth)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify"' -l 'key' -d 'A trusted public key or certificate (PEM or DER), or a directory of them; for the SDK\'s other credentials also a JWKS or a PKCS#12 file. Repeatable.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" key-password-file' -l 'key-password-file' -d 'A file whose first line is the password of a PKCS#12 --key (software statements and signed requestor IDs only; else TOKENINSPECT_KEY_PASSWORD, a prompt on a terminal, or empty).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" allow-insecure-keys' -l 'allow-insecure-keys' -d 'Accept RSA keys under 2048 bits (old deployments used RSA-1024).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" rsa-pss' -l 'rsa-pss' -d 'Verify with RSA keys as RSA-PSS (SHA-256) instead of PKCS#1 v1.5.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" list-keys' -l 'list-keys' -d 'List the trusted keys loaded (type, file, SHA-256 fingerprint) on stderr.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" now' -l 'now' -d 'The time to check against: ISO 8601, or an epoch number (up to 11 digits seconds, as date +%s prints, more milliseconds). (default: the current time)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" leeway' -l 'leeway' -d 'Tolerated clock skew each way, in seconds. (default: 30)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" resource' -l 'resource' -d 'The resource the token must be for (a bare id or a Media RSS document).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" requestor' -l 'requestor' -d 'The requestor the token must be for.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify"' -l 'mvpd' -d 'An allowed MVPD. Repeatable.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" fingerprint' -l 'fingerprint' -d 'The device fingerprint the token must be bound to (lowercase hex).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" device-id' -l 'device-id' -d 'The device id the token must be bound to (hashed like the token\'s fingerprint).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" reject-replays' -l 'reject-replays' -d 'Accept each media token once; later copies get TOKEN_REPLAYED.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" insecure-skip-signature' -l 'insecure-skip-signature' -d 'Check everything but the signature (never for deciding playback).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" jobs' -l 'jobs' -d 'Verify with N threads (1 to 256); output stays in input order.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" kind' -l 'kind' -d 'Read every INPUT as this kind: software-statement, signed-requestor-id, user-metadata, or a CDN token: akamai, cloudfront, cat, nginx-secure-link. (default: detected from the form)' -rfka 'software-statement signed-requestor-id user-metadata akamai cloudfront cat nginx-secure-link'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" digest' -l 'digest' -d 'The digest of a signed requestor ID\'s RSA PKCS#1 v1.5 signature: sha256, or sha1 for old registrations.' -rfka 'sha256 sha1'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" profile' -l 'profile' -d 'CDN tokens: a CDN profile (as tokengate --cdn-profile reads it), which gives the kind, the keys, the token name and the secure-link expression.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" url' -l 'url' -d 'CDN tokens: the URL the edge was asked for. (default: the pasted URL)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" client-ip' -l 'client-ip' -d 'CDN tokens: the viewer\'s IP address, for a token bound to one.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" key-id' -l 'key-id' -d 'CDN tokens: the Key-Pair-Id (cloudfront) or kid (cat) the --key answers to. (default: the token\'s)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" secure-link-md5' -l 'secure-link-md5' -d 'CDN tokens: the edge\'s secure_link_md5 expression, the secret written $secret, for an nginx-secure-link --key (the secret file).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect mint" -eq 1' -fa 'token' -d 'Issue a signed token (for tests, samples and staging servers).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect mint" -eq 1' -fa 'software-statement' -d 'Issue a signed software statement (a JWS: RS256 with an RSA key, ES256 with a P-256 key, EdDSA with Ed25519).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect mint" -eq 1' -fa 'signed-requestor-id' -d 'Sign a requestor ID with the programmer\'s RSA private key (PKCS#1 v1.5, SHA-256 or SHA-1); prints its Base64.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect mint" -eq 1' -fa 'metadata' -d 'Issue user metadata with chosen members encrypted to a public key or certificate.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_positional "tokeninspect mint" -eq 1' -fa 'cdn' -d 'Print what the gate\'s CDN exchange hands out for a profile and a resource (signed URL, cookies, header).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" key' -l 'key' -d 'The private key (PEM or DER PKCS#8).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" allow-insecure-keys' -l 'allow-insecure-keys' -d 'Accept RSA keys under 2048 bits.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" kind' -l 'kind' -d 'The kind of token.' -rfka 'media authentication authorization'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" root' -l 'root' -d 'Root element of a media token: authToken (what servers send) or shortAuthorizationToken.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" requestor' -l 'requestor' -d 'The requestor id.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" resource' -l 'resource' -d 'The resource: a bare id or a Media RSS document (required for media and authorization tokens).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" mvpd' -l 'mvpd' -d 'The MVPD id.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" proxy-mvpd' -l 'proxy-mvpd' -d 'The proxy MVPD id (media tokens).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" session-guid' -l 'session-guid' -d 'The session GUID (media) or authentication GUID. (default: a fresh random one, as issuers write)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" ttl' -l 'ttl' -d 'Lifetime from the issue time: milliseconds, or a number with ms, s, min or h. (default: 7min, as servers issue them)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" issue-time' -l 'issue-time' -d 'Issue time: any token date shape, ISO 8601 or epoch milliseconds. (default: the current time)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" fingerprint' -l 'fingerprint' -d 'Device fingerprint, lowercase hex (authN/authZ).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" device-id' -l 'device-id' -d 'Device id, hashed with SHA-256 into the fingerprint (authN/authZ).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token"' -l 'field' -d 'An extra element, PATH=VALUE. Repeatable.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" closed-signature' -l 'closed-signature' -d 'Write <signatureInfo>…</signatureInfo> instead of the legacy unclosed form real servers emit.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" encoding' -l 'encoding' -d 'How to write the token.' -rfka 'raw base64 base64url'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" pretty' -l 'pretty' -d 'Write the token element one field per line (the signature covers those exact bytes).'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint token" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" key' -l 'key' -d 'The private key (PEM or DER PKCS#8).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" allow-insecure-keys' -l 'allow-insecure-keys' -d 'Accept RSA keys under 2048 bits.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" kid' -l 'kid' -d 'The key id written in the header (kid).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" software-id' -l 'software-id' -d 'The software_id claim.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" software-version' -l 'software-version' -d 'The software_version claim.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" iss' -l 'iss' -d 'The iss claim.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" sub' -l 'sub' -d 'The sub claim.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement"' -l 'aud' -d 'An aud value. Repeatable (several make an array).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" issue-time' -l 'issue-time' -d 'The iat claim: ISO 8601 or epoch seconds. (default: the current time)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" ttl' -l 'ttl' -d 'Lifetime from iat, for exp: seconds, or a number with s, min, h or d. (default: no exp)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" jti' -l 'jti' -d 'The jti claim. (default: none)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement"' -l 'claim' -d 'Another claim, NAME=VALUE: VALUE as JSON when it is a JSON number, true, false, null, array or object, else as a string. Repeatable.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" jwks-out' -l 'jwks-out' -d 'Also write the JWKS of the public key (with --kid) to this file.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint software-statement" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" key' -l 'key' -d 'The programmer\'s private key (PEM, DER, encrypted PEM, PKCS#12).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" key-password-file' -l 'key-password-file' -d 'A file whose first line is the key\'s password.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" requestor' -l 'requestor' -d 'The requestor ID to sign.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" digest' -l 'digest' -d 'The signature\'s digest: sha256, or sha1 for old registrations.' -rfka 'sha256 sha1'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint signed-requestor-id" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata" encrypt-to' -l 'encrypt-to' -d 'The public key or certificate the encrypted members are encrypted to.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata"' -l 'data' -d 'A data member, NAME=VALUE. Repeatable.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata"' -l 'encrypt' -d 'A data member to encrypt. Repeatable.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata" updated' -l 'updated' -d 'updated: epoch seconds. (default: the current time)' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata" scheme' -l 'scheme' -d 'How values are encrypted: rsa-pkcs1, rsa-oaep, rsa-oaep-256, or jwe-<alg>-<enc> such as jwe-rsa-oaep-256-a256gcm, jwe-rsa1_5-a128cbc-hs256.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint metadata" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" profile' -l 'profile' -d 'A CDN profile file (as tokengate --cdn-profile reads).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" resource' -l 'resource' -d 'The resource whose URL the profile names.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" now' -l 'now' -d 'Issue as at this time: ISO 8601, or epoch seconds or milliseconds (default: now).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" client-ip' -l 'client-ip' -d 'The viewer\'s IP address, for a profile with bind-ip = true.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" requestor' -l 'requestor' -d 'The requestor id a CAT names as its issuer when the profile sets no issuer.' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" lifetime' -l 'lifetime' -d 'The lifetime in seconds when the profile sets none (the gate uses its session lifetime).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" leeway' -l 'leeway' -d 'How far an edge\'s clock may run behind, in seconds (the gate\'s --leeway).' -rfka ''
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect mint cdn" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect metadata" decrypt-key' -l 'decrypt-key' -d 'The programmer\'s private key (PEM, DER, encrypted PEM, PKCS#12).' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect metadata" key-password-file' -l 'key-password-file' -d 'A file whose first line is the key\'s password.' -rF
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect metadata" format' -l 'format' -d 'Output format: text or json.' -rfka 'text json'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect metadata" version' -l 'version' -d 'Show the version.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect metadata" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'tokeninspect' -n '__tokeninspect_should_offer_completions_for_flags_or_options "tokeninspect help" version' -l 'version' -d 'Show the version.'
