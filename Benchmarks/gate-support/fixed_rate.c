// fixed_rate: an open-loop HTTP/1.1 load generator for Benchmarks/gate.
//
//   fixed_rate HOST PORT RATE SECONDS CONNECTIONS TOKENS direct|nginx|session
//
// Sends RATE requests a second for SECONDS over CONNECTIONS keep-alive
// connections, one media token a request from the file TOKENS (one a line),
// as nginx's auth_request sends it to the gate (direct: GET /v1/auth-request
// with X-Original-URI) or as a player sends it to nginx (nginx: GET
// /hls/tnt/seg.ts?token=…); with session, TOKENS holds one playback session
// credential, sent with every request as a segment's cookie (direct to the
// gate, as nginx's auth_request sends it). wrk measures latency at full rate, where every
// request waits behind the queue it builds; wrk2, which measures at a fixed
// rate, is not in Debian. So this is the small one the issue allows.
//
// Latency runs from the moment a request was due (start + i / RATE) to the end
// of its answer, not from when it was written: a request that waits for a free
// connection counts its wait (no coordinated omission). Prints one line of
// key=value pairs: due, sent, answered, non2xx, errors, p50/p90/p99/p999/max in ms.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { MAX_CONNECTIONS = 1024, REQUEST_MAX = 8192, RESPONSE_MAX = 65536 };

typedef struct {
    int fd;
    int busy;
    double due;               // when the request on this connection was due
    char request[REQUEST_MAX];
    size_t request_length, written;
    char response[RESPONSE_MAX];
    size_t response_length;
} connection;

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "fixed_rate: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int open_connection(const char *host, int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) { fprintf(stderr, "fixed_rate: bad host %s\n", host); exit(64); }
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// The length of a complete answer at the start of `text`, 0 while incomplete,
// -1 when it is not one this generator reads (no Content-Length).
static long complete_answer(const char *text, size_t length, int *status) {
    const char *end = memmem(text, length, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head = (size_t)(end - text) + 4;
    if (length < 12 || memcmp(text, "HTTP/1.1 ", 9) != 0) return -1;
    *status = atoi(text + 9);
    long body = -1;
    for (const char *line = memchr(text, '\n', head); line != NULL && line < end; line = memchr(line + 1, '\n', (size_t)(end - line))) {
        if (strncasecmp(line + 1, "content-length:", 15) == 0) body = atol(line + 16);
    }
    if (body < 0 && (*status == 204 || *status == 304 || (*status >= 100 && *status < 200))) body = 0;
    if (body < 0) return -1;
    return (size_t)head + (size_t)body <= length ? (long)head + body : 0;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: fixed_rate HOST PORT RATE SECONDS CONNECTIONS TOKENS direct|nginx|session\n");
        return 64;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]);
    double rate = atof(argv[3]), seconds = atof(argv[4]);
    int connections = atoi(argv[5]);
    int through_nginx = strcmp(argv[7], "nginx") == 0, session = strcmp(argv[7], "session") == 0;
    if (rate <= 0 || seconds <= 0 || connections < 1 || connections > MAX_CONNECTIONS) {
        fprintf(stderr, "fixed_rate: RATE and SECONDS > 0, 1 <= CONNECTIONS <= %d\n", MAX_CONNECTIONS);
        return 64;
    }

    // The tokens, one a line; each used once.
    FILE *file = fopen(argv[6], "r");
    if (file == NULL) fail(argv[6]);
    size_t token_count = 0, token_capacity = 1024;
    char **tokens = malloc(token_capacity * sizeof *tokens);
    char *line = NULL;
    size_t line_capacity = 0;
    ssize_t read_length;
    while ((read_length = getline(&line, &line_capacity, file)) > 0) {
        while (read_length > 0 && (line[read_length - 1] == '\n' || line[read_length - 1] == '\r')) line[--read_length] = 0;
        if (read_length == 0) continue;
        if (token_count == token_capacity) tokens = realloc(tokens, (token_capacity *= 2) * sizeof *tokens);
        tokens[token_count++] = strdup(line);
    }
    fclose(file);
    free(line);
    size_t due_total = (size_t)(rate * seconds);
    if (token_count < (session ? 1 : due_total)) {
        fprintf(stderr, "fixed_rate: %zu tokens for %zu requests\n", token_count, due_total);
        return 64;
    }

    int poll = epoll_create1(0);
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    if (poll < 0 || timer < 0) fail("epoll/timerfd");
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    epoll_ctl(poll, EPOLL_CTL_ADD, timer, &event);
    connection *pool = calloc((size_t)connections, sizeof *pool);
    for (int i = 0; i < connections; i++) {
        pool[i].fd = open_connection(host, port);
        event = (struct epoll_event){.events = EPOLLIN, .data.u64 = (uint64_t)i};
        epoll_ctl(poll, EPOLL_CTL_ADD, pool[i].fd, &event);
    }

    double *latencies = malloc(due_total * sizeof *latencies);
    size_t sent = 0, answered = 0, non2xx = 0, errors = 0;
    double start = now_seconds() + 0.05, interval = 1.0 / rate, drain_until = start + seconds + 2.0;
    struct epoll_event ready[64];
    for (;;) {
        double now = now_seconds();
        // Every request now due goes out on an idle connection, oldest first.
        for (int i = 0; i < connections && sent < due_total && start + (double)sent * interval <= now; i++) {
            connection *c = &pool[i];
            if (c->busy) continue;
            const char *token = tokens[session ? 0 : sent];
            int length = session
                ? snprintf(c->request, REQUEST_MAX, "GET /v1/auth-request HTTP/1.1\r\nHost: %s\r\nCookie: tokengate_session=%s\r\nX-Original-URI: /hls/tnt/seg.ts\r\nX-Token-Resource: TNT\r\n\r\n", host, token)
                : through_nginx
                ? snprintf(c->request, REQUEST_MAX, "GET /hls/tnt/seg.ts?token=%s HTTP/1.1\r\nHost: %s\r\n\r\n", token, host)
                : snprintf(c->request, REQUEST_MAX, "GET /v1/auth-request HTTP/1.1\r\nHost: %s\r\nX-Original-URI: /hls/tnt/seg.ts?token=%s\r\nX-Token-Resource: TNT\r\n\r\n", host, token);
            if (length <= 0 || length >= REQUEST_MAX) { fprintf(stderr, "fixed_rate: token too long\n"); return 64; }
            c->request_length = (size_t)length;
            c->written = 0;
            c->response_length = 0;
            c->due = start + (double)sent * interval;
            c->busy = 1;
            sent++;
            ssize_t n = write(c->fd, c->request, c->request_length);
            if (n < 0 && errno != EAGAIN) fail("write");
            c->written = n > 0 ? (size_t)n : 0;
            if (c->written < c->request_length) { fprintf(stderr, "fixed_rate: short write\n"); return 1; }
        }
        int busy = 0;
        for (int i = 0; i < connections; i++) busy += pool[i].busy;
        if (sent == due_total && busy == 0) break;
        if (now > drain_until) break;

        // Sleep until the next request is due (a timerfd: epoll's milliseconds
        // would send in bursts and add up to a millisecond to what we measure).
        // With every connection busy only an answer can help: no timer, or
        // this loop would spin on a core the server needs.
        if (sent < due_total && busy < connections) {
            double next = start + (double)sent * interval;
            struct itimerspec when = {0};
            double at = next > now ? next : now + 1e-6;
            when.it_value.tv_sec = (time_t)at;
            when.it_value.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
            timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, NULL);
        }
        int count = epoll_wait(poll, ready, 64, sent < due_total && busy < connections ? -1 : 100);
        if (count < 0 && errno != EINTR) fail("epoll_wait");
        for (int k = 0; k < count; k++) {
            if (ready[k].data.u64 == UINT64_MAX) {
                uint64_t expirations;
                (void)!read(timer, &expirations, sizeof expirations);
                continue;
            }
            connection *c = &pool[ready[k].data.u64];
            ssize_t n = read(c->fd, c->response + c->response_length, RESPONSE_MAX - c->response_length);
            if (n <= 0) {
                if (n < 0 && errno == EAGAIN) continue;
                // The server closed the connection (nginx after a refusal it
                // answers with Connection: close): the request on it, if any,
                // is an error; a fresh connection takes its place.
                if (c->busy) errors++;
                epoll_ctl(poll, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                c->fd = open_connection(host, port);
                event = (struct epoll_event){.events = EPOLLIN, .data.u64 = ready[k].data.u64};
                epoll_ctl(poll, EPOLL_CTL_ADD, c->fd, &event);
                c->busy = 0;
                c->response_length = 0;
                continue;
            }
            c->response_length += (size_t)n;
            int status = 0;
            long used = complete_answer(c->response, c->response_length, &status);
            if (used < 0) { fprintf(stderr, "fixed_rate: an answer without Content-Length\n"); return 1; }
            if (used == 0) {
                if (c->response_length == RESPONSE_MAX) { fprintf(stderr, "fixed_rate: answer too large\n"); return 1; }
                continue;
            }
            if (!c->busy) { errors++; continue; }
            latencies[answered++] = now_seconds() - c->due;
            if (status < 200 || status > 299) non2xx++;
            c->busy = 0;
            c->response_length = 0;
        }
    }

    qsort(latencies, answered, sizeof *latencies, compare_doubles);
#define PERCENTILE(p) (answered ? latencies[(size_t)((double)(answered - 1) * (p))] * 1e3 : 0.0)
    printf("due=%zu sent=%zu answered=%zu non2xx=%zu errors=%zu p50=%.3f p90=%.3f p99=%.3f p999=%.3f max=%.3f\n",
           due_total, sent, answered, non2xx, errors, PERCENTILE(0.50), PERCENTILE(0.90), PERCENTILE(0.99),
           PERCENTILE(0.999), PERCENTILE(1.0));
    return answered + errors == due_total ? 0 : 2;
}
