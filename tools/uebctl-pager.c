/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pager, as systemd's tools do it: only when stdout is a terminal;
 * $UEBCTL_PAGER, else $PAGER, else less with LESS=FRSXMK (quit at the end
 * of one screen, keep colours, no line wrapping, no init/deinit strings,
 * verbose prompt, Ctrl-C quits), else more; "" or "cat" turns it off. */
#include "uebctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid;

/* When no pager could be started, the child copies its input through: the
 * output must not be lost. */
static void copy_through(void) {
        char buf[8192];
        ssize_t n;

        while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
                if (write(STDOUT_FILENO, buf, (size_t) n) != n)
                        break;
}

static void run_pager(const char *pager) {
        (void) setenv("LESS", "FRSXMK", 0);
        /* The pager outlives nothing: gone with us. */
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (pager)
                execl("/bin/sh", "sh", "-c", pager, (char *) NULL);
        else {
                execlp("less", "less", (char *) NULL);
                execlp("more", "more", (char *) NULL);
        }
        copy_through();
        _exit(EXIT_SUCCESS);
}

void uebctl_pager_open(void) {
        const char *pager;
        int fds[2];
        pid_t pid;

        if (!uebctl_opts.pager || pager_pid > 0 || !isatty(STDOUT_FILENO))
                return;
        pager = getenv("UEBCTL_PAGER");
        if (!pager)
                pager = getenv("PAGER");
        if (pager && (!*pager || strcmp(pager, "cat") == 0))
                return;

        fflush(stdout);
        if (pipe2(fds, O_CLOEXEC) < 0)
                return;         /* unpaged output beats none */
        pid = fork();
        if (pid < 0) {
                close(fds[0]);
                close(fds[1]);
                return;
        }
        if (pid == 0) {
                if (dup2(fds[0], STDIN_FILENO) < 0)
                        _exit(EXIT_FAILURE);
                run_pager(pager);
        }
        if (dup2(fds[1], STDOUT_FILENO) < 0) {
                close(fds[0]);
                close(fds[1]);
                kill(pid, SIGTERM);
                (void) waitpid(pid, NULL, 0);
                return;
        }
        close(fds[0]);
        close(fds[1]);
        pager_pid = pid;
}

void uebctl_pager_close(void) {
        if (pager_pid <= 0)
                return;
        fflush(stdout);
        /* End of input for the pager; it quits when the user does. */
        close(STDOUT_FILENO);
        while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        pager_pid = 0;
}
