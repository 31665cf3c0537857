/* sanitizer.h - UNDER_TSAN: 1 when the test is built with ThreadSanitizer,
 * where some cases differ (each says why), else 0. */
#ifndef NP_TEST_SANITIZER_H
#define NP_TEST_SANITIZER_H

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#endif
