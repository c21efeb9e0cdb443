// Readers of the kernel libraries' A/B switches (environment variables, each read once by its caller into a static).
// A switch set to a value it does not know warns on stderr and keeps the default, so that a mistyped switch never
// passes for a measurement of it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

namespace cuzk {

// The warning for a switch set to a value it does not know.
inline void env_ignored(const char* name, const char* value, const char* expected) {
    fprintf(stderr, "cuzk: warning: %s=%s ignored (expected %s); the default is used\n", name, value, expected);
}

// The variable as a number in [lo, hi], else dflt (unset or empty; with a warning, not a number or out of range).
inline uint32_t env_u32(const char* name, uint32_t lo, uint32_t hi, uint32_t dflt) {
    const char* e = getenv(name);
    if (!e || !*e) return dflt;
    char* end = nullptr;
    const long long v = strtoll(e, &end, 10);
    if (end != e && *end == '\0' && v >= (long long)lo && v <= (long long)hi) return (uint32_t)v;
    char expected[80];
    snprintf(expected, sizeof(expected), "a whole number from %u to %u", lo, hi);
    env_ignored(name, e, expected);
    return dflt;
}

// Which of `words` the variable is set to: its index, or -1 (unset or empty; with a warning, anything else).
inline int env_word(const char* name, std::initializer_list<const char*> words) {
    const char* e = getenv(name);
    if (!e || !*e) return -1;
    int i = 0;
    for (const char* w : words) {
        if (!strcmp(e, w)) return i;
        i++;
    }
    std::string expected;
    for (const char* w : words) expected += (expected.empty() ? "" : " or ") + std::string(w);
    env_ignored(name, e, expected.c_str());
    return -1;
}

}  // namespace cuzk
