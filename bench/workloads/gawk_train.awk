# gawk_train.awk - the training workload of bench/pgo.py for gawk: word and
# identifier counts of C source text, line lengths, declarations and string
# literals, sorted by gawk itself. Not the evaluation workload: a profile
# must carry over to code paths weighted differently.
# usage: gawk -f gawk_train.awk FILE
{
    n = split($0, w, /[^A-Za-z0-9_]+/)
    for (i = 1; i <= n; i++)
        if (w[i] != "") { count[w[i]]++; words++ }
    len[length($0)]++
    if ($0 ~ /^[ \t]*(static|int|void|char|unsigned|const)[ \t]/) decl++
    if (match($0, /"[^"]*"/)) strs[substr($0, RSTART, RLENGTH)]++
}
END {
    PROCINFO["sorted_in"] = "@val_num_desc"
    k = 0
    for (t in count) { if (++k > 40) break; printf "%-24s %8d\n", t, count[t] }
    k = 0
    for (s in strs) { if (++k > 10) break; printf "%6d %s\n", strs[s], s }
    PROCINFO["sorted_in"] = "@ind_num_asc"
    for (l in len) if (len[l] > 1000) printf "length %d: %d lines\n", l, len[l]
    print NR, words, decl, length(count)
}
