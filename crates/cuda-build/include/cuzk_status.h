/* The status every cuzk C entry point returns: code 0 is success, otherwise message says what failed. */
#ifndef CUZK_STATUS_H
#define CUZK_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuzk_status {
    int code;
    char message[240];
} cuzk_status;

#ifdef __cplusplus
}
#endif

#endif
