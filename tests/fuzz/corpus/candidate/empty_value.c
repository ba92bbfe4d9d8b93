// ksearch: entry=k
// ksearch: param P in 1,,2
