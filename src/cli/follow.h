/* follow.h - the processes a recorded program leaves running (a daemon
 * whose parent exits, the grandchild of a double fork): `nanoprof record`
 * becomes the reaper of its orphaned descendants (Linux's
 * PR_SET_CHILD_SUBREAPER) before it starts the program, so that such a
 * process is re-parented to record rather than to init, and record can
 * wait for it as for the program, or say that it left it running. The
 * trace keeps each process's real parent (the runtime notes it at start
 * and at fork: INFO's ppid). */
#ifndef NP_CLI_FOLLOW_H
#define NP_CLI_FOLLOW_H

#include <stddef.h>
#include <sys/types.h>

/* Makes this process the reaper of its orphaned descendants. 0, or -1
 * (errno) where the system cannot. */
int np_follow_start(void);

/* Reaps the descendants that have ended, then puts the pids of those
 * still running (every generation, in pid order) into PIDS, at most MAX;
 * returns how many there are. */
size_t np_follow_running(pid_t *pids, size_t max);

/* From now on, until np_follow_wait returns, SIGINT, SIGTERM and SIGHUP
 * are np_follow_wait's to handle (none is lost in between). */
void np_follow_catch(void);

/* Waits until every descendant has ended (returns 0), or until SIGINT
 * (^C: returns 1, leaving them running). SIGTERM and SIGHUP are passed on
 * to the descendants still running, as they were to the program, and the
 * wait goes on until they end; so is PASS first, unless it is 0 (the
 * signal this process was sent while the program ran). */
int np_follow_wait(int pass);

#endif
