# bash completion for eatmydata -*- shell-script -*-
_eatmydata()
{
    local cur prev words cword
    _init_completion -s || return

    local i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --) _command_offset $((i + 1)); return ;;
            -*) ;;
            *) _command_offset $i; return ;;
        esac
    done
    case $cur in
        --only=*)
            cur=${cur#--only=}
            COMPREPLY=($(compgen -c -- "$cur"))
            return ;;
        -*)
            COMPREPLY=($(compgen -W '--only= --sync-on-exit --help --version' -- "$cur"))
            [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
            return ;;
    esac
    _command_offset $cword
} && complete -F _eatmydata eatmydata
