#!/bin/sh
# test_record_summary.sh NANOPROF - `nanoprof record`'s closing line walks
# the trace's chunks as the reader does (np_trace_chunk_check): a chunk
# the file ends inside is neither data nor an END. The recorded program
# (sh, not instrumented: it leaves no file of its own) writes the trace
# file itself.
set -u
NP=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
HEAD='NPTRACE\000\001\000\020\000\000\000\000\000'

# run NAME BYTES: records sh writing BYTES as the trace's one file
run() {
    "$NP" record -o "$TMP/$1" -- sh -c "printf '$2' > \"\$NANOPROF_RECORD/1.npt\"" 2> "$TMP/$1.err"
    echo $? > "$TMP/$1.rc"
}

expect() { # NAME TEXT: the closing lines hold TEXT
    if ! grep -qF -- "$2" "$TMP/$1.err"; then
        echo "FAIL: $1: no \"$2\" in:"
        sed 's/^/  /' "$TMP/$1.err"
        fail=1
    fi
}

refuse() { # NAME TEXT: they do not
    if grep -qF -- "$2" "$TMP/$1.err"; then
        echo "FAIL: $1: \"$2\" in:"
        sed 's/^/  /' "$TMP/$1.err"
        fail=1
    fi
}

# an EVENTS chunk that claims 100 bytes, 10 there: nothing was recorded
run cut_events "$HEAD\004\000\000\000\144\000\000\000abcdefghij"
expect cut_events "trace in $TMP/cut_events: 1 file, 34 bytes; 1 file cut short"
expect cut_events "nothing was recorded from sh"

# an END chunk cut after its lost count: no END, nothing counted lost
run cut_end "$HEAD\005\000\000\000\030\000\000\000\000\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000"
expect cut_end "1 file cut short"
refuse cut_end "LOST"

# a chunk that claims more than a chunk may hold ends the walk there
run too_long "$HEAD\004\000\000\000\000\000\000\010abcdefgh"
expect too_long "nothing was recorded from sh"

# whole: an END with 7 lost events
run whole "$HEAD\005\000\000\000\030\000\000\000\000\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000\000\000\000\000\000\000\360\077"
refuse whole "cut short"
expect whole "trace in $TMP/whole: 1 file, 48 bytes; LOST 7 events"
exit $fail
