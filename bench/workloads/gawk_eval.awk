# gawk_eval.awk - the evaluation workload of bench/pgo.py for gawk: field
# splitting, gsub, numeric fields, upper-case macros, tolower/substr keys,
# index and sprintf over C source text: other builtins, weighted otherwise
# than in gawk_train.awk.
# usage: gawk -f gawk_eval.awk FILE
BEGIN { FS = "[ \t]+" }
{
    nf += NF
    line = $0
    punct += gsub(/[(){};,]/, "", line)
    for (i = 1; i <= NF; i++) {
        f = $i
        if (f ~ /^[0-9]+$/) nums += f
        else if (f ~ /^[A-Z_][A-Z0-9_]+$/) macro[f]++
        else if (length(f) > 3) key[tolower(substr(f, 1, 4))]++
    }
    if (index($0, "sqlite3")) api++
    out = sprintf("%6d %s", NR, toupper(substr($0, 1, 24)))
    h = (h * 31 + length(out)) % 1000003
}
END {
    PROCINFO["sorted_in"] = "@val_num_desc"
    k = 0
    for (m in macro) { if (++k > 20) break; printf "%-32s %d\n", m, macro[m] }
    k = 0
    for (m in key) { if (++k > 20) break; printf "%-8s %d\n", m, key[m] }
    print NR, nf, punct, nums, api, h
}
