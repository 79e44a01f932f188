# bash completion for eatmydata, nocache, hirestimes, crashtest, syncstat, cachestats, cachedel -*- shell-script -*-
# Installed once under each command's name, for bash-completion's lazy loading.
_eatmydata_tools()
{
    local cur prev words cword split
    _init_completion -s || return

    local i opts='--help --version'
    # cachestats and cachedel take options and one file, no command.
    if [[ $1 == cachestats || $1 == cachedel ]]; then
        [[ $1 == cachedel && $prev == -n ]] && return
        [[ $1 == cachestats ]] && opts+=' -q -v' || opts+=' -n'
        [[ $cur == -* ]] && COMPREPLY=($(compgen -W "$opts" -- "$cur")) || _filedir
        return
    fi
    [[ $1 == nocache ]] && opts+=' -n -f -D'
    if [[ $1 == nocache ]]; then
        case $prev in
            -D) _filedir; return ;;
            -n) return ;;
        esac
    fi
    [[ $1 == eatmydata ]] && opts+=' --only= --sync-on-exit --stats --seccomp= --no-io-uring --on-behalf='
    [[ $1 == syncstat ]] && opts+=' --output= --json --html= --keep= --audit'
    [[ $1 == crashtest ]] &&
        opts+=' --at= --each --max= --random= --seed= --writes --model= --states= --check= --json --first-failure
               --jobs= --budget= --junit= --outside-ok='
    if [[ $1 == crashtest ]]; then
        if ((cword == 1)) && ! $split && [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W 'record check merge' -- "$cur") $(compgen -d -- "$cur"))
            return
        fi
        case ${words[1]} in
            record) opts+=' --bundle=' ;;
            check | merge)
                [[ $cur == -* ]] && COMPREPLY=($(compgen -W "--json --json= --junit= --first-failure
                    $([[ ${words[1]} == check ]] && echo --shard= --shards= --jobs= --budget= --check=)" \
                    -- "$cur")) || _filedir
                [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
                return
                ;;
        esac
    fi
    if [[ $1 == syncstat ]]; then
        case $prev in
            --output | -o | --keep | -k | --html) _filedir; return ;;
        esac
        if ((cword == 1)) && ! $split && [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W 'report compare' -- "$cur") $(compgen -c -- "$cur"))
            return
        fi
        if [[ ${words[1]} == report ]]; then
            [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--json --html= --output=' -- "$cur")) ||
                _filedir -d
            return
        fi
        if [[ ${words[1]} == compare ]]; then
            [[ $cur == -* ]] && COMPREPLY=($(compgen -W \
                '--max-calls-increase= --max-time-increase= --output= --junit=' -- "$cur")) || _filedir
            [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
            return
        fi
    fi
    local want_dir=0 first=1
    [[ $1 == crashtest ]] && want_dir=1 # crashtest DIR COMMAND...
    [[ $1 == crashtest && ${words[1]} == record ]] && first=2
    for ((i = first; i < cword; i++)); do
        case ${words[i]} in
            --) ((!want_dir)) && { _command_offset $((i + 1)); return; } ;;
            -[nD]) [[ $1 == nocache ]] && ((i++)) ;;
            -*) ;;
            *) ((want_dir)) && want_dir=0 || { _command_offset $i; return; } ;;
        esac
    done
    if [[ $prev == --model ]] && $split; then
        COMPREPLY=($(compgen -W 'posix ext4-ordered xfs ext4-noauto_da_alloc all' -- "$cur"))
        return
    fi
    if [[ $prev == --seccomp ]] && $split; then
        COMPREPLY=($(compgen -W 'auto on off' -- "$cur"))
        return
    fi
    if [[ $prev == --on-behalf ]] && $split; then
        COMPREPLY=($(compgen -W 'on off' -- "$cur"))
        return
    fi
    if [[ $prev == --only ]] && $split; then
        COMPREPLY=($(compgen -c -- "$cur"))
        return
    fi
    case $cur in
        -*)
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
            return ;;
    esac
    ((want_dir)) && { _filedir -d; return; }
    _command_offset $cword
} && complete -F _eatmydata_tools eatmydata nocache hirestimes crashtest syncstat cachestats cachedel
