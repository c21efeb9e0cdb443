// Readers of the kernel libraries' A/B switches (environment variables, each read once by its caller into a static).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace cuzk {

// The variable as a number in [lo, hi], else dflt (unset, not a number, or out of range).
inline uint32_t env_u32(const char* name, uint32_t lo, uint32_t hi, uint32_t dflt) {
    const char* e = getenv(name);
    const long long v = e ? strtoll(e, nullptr, 10) : 0;
    return v >= (long long)lo && v <= (long long)hi ? (uint32_t)v : dflt;
}

// Whether the variable is set to exactly `word`.
inline bool env_is(const char* name, const char* word) {
    const char* e = getenv(name);
    return e && !strcmp(e, word);
}

}  // namespace cuzk
