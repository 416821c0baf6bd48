/*
 * tokenbench_c: the native floor for Benchmarks/run.
 *
 * The same work as the Swift library's `TokenVerifier`, written the way a
 * careful C programmer would for speed ("tuned"): Base64 transport decoding,
 * framing of the signatureInfo block and the token element, libxml2's push
 * (SAX2) parser with ONE context reused across tokens (xmlCtxtResetPush),
 * SAX callbacks that collect the media token's fields into fixed buffers,
 * ttl and issueTime parsed into milliseconds, then SHA-256 and EVP_PKEY_verify
 * on a context set up once per thread (Ed25519: EVP_DigestVerify on a reused
 * EVP_MD_CTX), and the vendor verifier's checks (expiry, requestor).
 *
 * --naive is the "straightforward" version for scale: a new parser context per
 * token and EVP_DigestVerifyInit/Update/Final per token.
 *
 *   tokenbench_c parse  --corpus FILE [--threads N] [--seconds S] [--warmup S] [--count N] [--naive]
 *   tokenbench_c verify --corpus FILE --key PUB.pem --now EPOCH_MS [--requestor ID] [...]
 *
 * Prints `RESULT <tokens/s> <tokens> <seconds>` (or `COUNTED <n> <passed>` with --count).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/err.h>

#define MAX_XML (64 * 1024)
#define MAX_FIELD 4096
#define LEEWAY_MS 30000LL

static int verify_mode;
static int naive;
static EVP_PKEY *public_key;
static EVP_MD *sha256;
static long long now_ms;
static const char *requestor = "TNT";

/* ---- corpus ---------------------------------------------------------------- */

typedef struct { const unsigned char *bytes; size_t length; } line_t;
static line_t *lines;
static size_t line_count;

static void die(const char *message) {
    fprintf(stderr, "tokenbench_c: %s\n", message);
    exit(2);
}

static void read_corpus(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) die("cannot read the corpus");
    size_t capacity = 1 << 20, length = 0;
    unsigned char *data = malloc(capacity);
    for (;;) {
        if (length == capacity) data = realloc(data, capacity *= 2);
        size_t got = fread(data + length, 1, capacity - length, file);
        if (got == 0) break;
        length += got;
    }
    fclose(file);
    size_t lines_capacity = 1024;
    lines = malloc(sizeof(line_t) * lines_capacity);
    size_t start = 0;
    for (size_t i = 0; i <= length; i++) {
        if (i == length || data[i] == '\n') {
            size_t end = i;
            if (end > start && data[end - 1] == '\r') end--;
            if (end > start) {
                if (line_count == lines_capacity) lines = realloc(lines, sizeof(line_t) * (lines_capacity *= 2));
                lines[line_count].bytes = data + start;
                lines[line_count].length = end - start;
                line_count++;
            }
            start = i + 1;
        }
    }
    if (line_count == 0) die("the corpus holds no token");
}

/* ---- Base64 ------------------------------------------------------------------ */

static unsigned char b64[256];

static void b64_init(void) {
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(b64, 0xFF, sizeof b64);
    for (int i = 0; i < 64; i++) b64[(unsigned char)alphabet[i]] = (unsigned char)i;
    b64['-'] = 62; b64['_'] = 63;   /* Base64url too */
    b64['='] = 0xFE;
    b64['\n'] = b64['\r'] = b64[' '] = b64['\t'] = 0xFD;  /* skipped */
}

/* Decodes; returns the length, or -1 on a non-Base64 byte. */
static long b64_decode(const unsigned char *in, size_t length, unsigned char *out, size_t capacity) {
    uint32_t acc = 0;
    int pending = 0;
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char v = b64[in[i]];
        if (v >= 64) {
            if (v == 0xFD) continue;
            if (v == 0xFE) break;
            return -1;
        }
        acc = acc << 6 | v;
        if (++pending == 4) {
            if (n + 3 > capacity) return -1;
            out[n++] = (unsigned char)(acc >> 16);
            out[n++] = (unsigned char)(acc >> 8);
            out[n++] = (unsigned char)acc;
            pending = 0;
            acc = 0;
        }
    }
    if (pending == 1) return -1;
    if (n + 2 > capacity) return -1;
    if (pending == 2) out[n++] = (unsigned char)(acc >> 4);
    if (pending == 3) { out[n++] = (unsigned char)(acc >> 10); out[n++] = (unsigned char)(acc >> 2); }
    return (long)n;
}

/* ---- per-thread state -------------------------------------------------------- */

enum { F_SESSION, F_REQUESTOR, F_RESOURCE, F_TTL, F_ISSUE, F_MVPD, F_PROXY, F_COUNT };
static const char *field_names[F_COUNT] = {
    "sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId", "proxyMvpdId"
};

typedef struct {
    xmlParserCtxtPtr parser;
    EVP_PKEY_CTX *verify;      /* RSA / ECDSA, set up once */
    EVP_MD_CTX *digest;        /* Ed25519 */
    int depth;
    int failed;
    int root_ok;
    char text[MAX_FIELD];
    size_t text_length;
    char fields[F_COUNT][MAX_FIELD];
    size_t field_lengths[F_COUNT];
    int seen[F_COUNT];
    unsigned char xml[MAX_XML];
    unsigned char signature[1024];
} state_t;

static void sax_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                      int nb_namespaces, const xmlChar **namespaces, int nb_attributes, int nb_defaulted,
                      const xmlChar **attributes) {
    (void)prefix; (void)uri; (void)nb_namespaces; (void)namespaces; (void)nb_attributes; (void)nb_defaulted; (void)attributes;
    state_t *s = ctx;
    s->depth++;
    if (s->depth == 1) {
        s->root_ok = strcmp((const char *)localname, "authToken") == 0
            || strcmp((const char *)localname, "shortAuthorizationToken") == 0;
    } else if (s->depth > 16) {
        s->failed = 1;
        xmlStopParser(s->parser);
    }
    s->text_length = 0;
}

static void sax_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    (void)prefix; (void)uri;
    state_t *s = ctx;
    if (s->depth == 2) {
        for (int f = 0; f < F_COUNT; f++) {
            if (strcmp((const char *)localname, field_names[f]) == 0) {
                if (s->seen[f]) { s->failed = 1; xmlStopParser(s->parser); return; }  /* duplicate */
                s->seen[f] = 1;
                memcpy(s->fields[f], s->text, s->text_length);
                s->fields[f][s->text_length] = 0;
                s->field_lengths[f] = s->text_length;
                break;
            }
        }
    }
    s->depth--;
    s->text_length = 0;
}

static void sax_text(void *ctx, const xmlChar *bytes, int length) {
    state_t *s = ctx;
    if (s->depth != 2) return;
    if (s->text_length + (size_t)length >= MAX_FIELD) { s->failed = 1; xmlStopParser(s->parser); return; }
    memcpy(s->text + s->text_length, bytes, (size_t)length);
    s->text_length += (size_t)length;
}

static void sax_refuse(void *ctx) {
    state_t *s = ctx;
    s->failed = 1;
    xmlStopParser(s->parser);
}
static void sax_comment(void *ctx, const xmlChar *value) { (void)value; sax_refuse(ctx); }
static void sax_pi(void *ctx, const xmlChar *target, const xmlChar *data) { (void)target; (void)data; sax_refuse(ctx); }
static void sax_subset(void *ctx, const xmlChar *name, const xmlChar *e, const xmlChar *s) { (void)name; (void)e; (void)s; sax_refuse(ctx); }
static xmlEntityPtr sax_entity(void *ctx, const xmlChar *name) {
    xmlEntityPtr predefined = xmlGetPredefinedEntity(name);
    if (!predefined) sax_refuse(ctx);
    return predefined;
}
static void sax_error(void *ctx, xmlErrorPtr error) {
    (void)error;
    state_t *s = ctx;
    s->failed = 1;
}

static xmlSAXHandler sax;

static void sax_init(void) {
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = sax_start;
    sax.endElementNs = sax_end;
    sax.characters = sax_text;
    sax.cdataBlock = sax_text;
    sax.ignorableWhitespace = sax_text;
    sax.comment = sax_comment;
    sax.processingInstruction = sax_pi;
    sax.internalSubset = sax_subset;
    sax.externalSubset = sax_subset;
    sax.getEntity = sax_entity;
    sax.serror = sax_error;
}

static xmlParserCtxtPtr new_parser(state_t *s) {
    xmlParserCtxtPtr parser = xmlCreatePushParserCtxt(&sax, s, NULL, 0, NULL);
    if (!parser) die("xmlCreatePushParserCtxt failed");
    xmlCtxtUseOptions(parser, XML_PARSE_NONET);
    parser->replaceEntities = 0;
    parser->loadsubset = 0;
    return parser;
}

static state_t *state_new(void) {
    state_t *s = calloc(1, sizeof(state_t));
    if (!naive) s->parser = new_parser(s);
    if (verify_mode && !naive) {
        if (EVP_PKEY_get_base_id(public_key) == EVP_PKEY_ED25519) {
            s->digest = EVP_MD_CTX_new();
        } else {
            s->verify = EVP_PKEY_CTX_new_from_pkey(NULL, public_key, NULL);
            if (!s->verify || EVP_PKEY_verify_init(s->verify) != 1) die("EVP_PKEY_verify_init failed");
            if (EVP_PKEY_get_base_id(public_key) == EVP_PKEY_RSA
                && EVP_PKEY_CTX_set_rsa_padding(s->verify, RSA_PKCS1_PADDING) != 1) die("padding");
            if (EVP_PKEY_CTX_set_signature_md(s->verify, sha256) != 1) die("signature md");
        }
    }
    return s;
}

/* ---- the token ----------------------------------------------------------------- */

static long long days_from_civil(long long y, long long m, long long d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *p, int n, long long *out) {
    long long v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* `2026-01-15 12:00:00 +0000` (the media issueTime shape) → epoch ms. */
static int parse_issue_time(const char *t, size_t n, long long *ms) {
    long long y, mo, d, h, mi, se, oh, om;
    if (n != 25 || t[4] != '-' || t[7] != '-' || t[10] != ' ' || t[13] != ':' || t[16] != ':' || t[19] != ' ') return 0;
    if (!digits(t, 4, &y) || !digits(t + 5, 2, &mo) || !digits(t + 8, 2, &d) || !digits(t + 11, 2, &h)
        || !digits(t + 14, 2, &mi) || !digits(t + 17, 2, &se) || !digits(t + 21, 2, &oh) || !digits(t + 23, 2, &om)) return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return 0;
    long long offset = (oh * 60 + om) * 60000LL * (t[20] == '-' ? -1 : 1);
    *ms = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000) - offset;
    return 1;
}

static const unsigned char *find(const unsigned char *hay, size_t n, const char *needle) {
    size_t k = strlen(needle);
    const unsigned char *p = hay, *end = hay + n;
    while (p + k <= end) {
        p = memchr(p, needle[0], (size_t)(end - p) - k + 1);
        if (!p) return NULL;
        if (memcmp(p, needle, k) == 0) return p;
        p++;
    }
    return NULL;
}

/* One token through the whole pipeline; 1 when it passes. */
static int process(state_t *s, const unsigned char *record, size_t length) {
    /* transport: raw XML or Base64 */
    const unsigned char *xml;
    size_t xml_length;
    size_t i = 0;
    while (i < length && (record[i] == ' ' || record[i] == '\t')) i++;
    if (i < length && record[i] == '<') {
        xml = record + i;
        xml_length = length - i;
    } else {
        long n = b64_decode(record + i, length - i, s->xml, sizeof s->xml);
        if (n < 0) return 0;
        xml = s->xml;
        xml_length = (size_t)n;
    }
    while (xml_length > 0 && (xml[xml_length - 1] == '\n' || xml[xml_length - 1] == ' ' || xml[xml_length - 1] == '\r')) xml_length--;

    /* framing: <signatureInfo>B64<signatureInfo> (legacy) or </signatureInfo>, then the token element */
    static const char open_tag[] = "<signatureInfo>";
    if (xml_length < sizeof open_tag || memcmp(xml, open_tag, sizeof open_tag - 1) != 0) return 0;
    const unsigned char *sig_text = xml + sizeof open_tag - 1;
    const unsigned char *sig_end = memchr(sig_text, '<', xml_length - (size_t)(sig_text - xml));
    if (!sig_end) return 0;
    const unsigned char *after = sig_end;
    size_t rest = xml_length - (size_t)(after - xml);
    if (rest >= 15 && memcmp(after, open_tag, 15) == 0) after += 15;
    else if (rest >= 16 && memcmp(after, "</signatureInfo>", 16) == 0) after += 16;
    else return 0;
    const unsigned char *element = after;
    size_t element_length = xml_length - (size_t)(after - xml);
    if (element_length < 3 || element[0] != '<' || element[element_length - 1] != '>') return 0;
    /* nothing else at the top level: the element must end with its own end tag */
    const unsigned char *name_end = element + 1;
    while (name_end < element + element_length && *name_end != '>' && *name_end != ' ' && *name_end != '/') name_end++;
    size_t name_length = (size_t)(name_end - element - 1);
    if (element_length < name_length + 3 || memcmp(element + element_length - name_length - 1, element + 1, name_length) != 0) return 0;
    if (find(element + 1, element_length - 1, "<signatureInfo")) return 0;

    /* parse */
    s->depth = 0;
    s->failed = 0;
    s->root_ok = 0;
    s->text_length = 0;
    memset(s->seen, 0, sizeof s->seen);
    xmlParserCtxtPtr parser = s->parser;
    if (naive) parser = s->parser = new_parser(s);
    else xmlCtxtResetPush(parser, NULL, 0, NULL, NULL);
    xmlParseChunk(parser, (const char *)element, (int)element_length, 1);
    int well_formed = parser->wellFormed;
    if (naive) { xmlFreeParserCtxt(parser); s->parser = NULL; }
    if (!well_formed || s->failed || !s->root_ok) return 0;

    /* typed token: required fields, ttl and issue time */
    if (!s->seen[F_REQUESTOR] || !s->seen[F_RESOURCE] || !s->seen[F_TTL] || !s->seen[F_ISSUE]) return 0;
    long long ttl, issued;
    size_t ttl_length = s->field_lengths[F_TTL];
    if (ttl_length == 0 || ttl_length > 18 || !digits(s->fields[F_TTL], (int)ttl_length, &ttl)) return 0;
    if (!parse_issue_time(s->fields[F_ISSUE], s->field_lengths[F_ISSUE], &issued)) return 0;
    long long expiry = issued + ttl;

    if (!verify_mode) return 1;

    /* signature */
    long signature_length = b64_decode(sig_text, (size_t)(sig_end - sig_text), s->signature, sizeof s->signature);
    if (signature_length <= 0) return 0;
    int ok;
    if (EVP_PKEY_get_base_id(public_key) == EVP_PKEY_ED25519) {
        EVP_MD_CTX *md = naive ? EVP_MD_CTX_new() : s->digest;
        ok = EVP_DigestVerifyInit(md, NULL, NULL, NULL, public_key) == 1
            && EVP_DigestVerify(md, s->signature, (size_t)signature_length, element, element_length) == 1;
        if (naive) EVP_MD_CTX_free(md);
    } else if (naive) {
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, public_key) == 1
            && EVP_DigestVerifyUpdate(md, element, element_length) == 1
            && EVP_DigestVerifyFinal(md, s->signature, (size_t)signature_length) == 1;
        EVP_MD_CTX_free(md);
    } else {
        unsigned char hash[32];
        unsigned int hash_length = 0;
        ok = EVP_Digest(element, element_length, hash, &hash_length, sha256, NULL) == 1
            && EVP_PKEY_verify(s->verify, s->signature, (size_t)signature_length, hash, hash_length) == 1;
    }
    if (!ok) { ERR_clear_error(); return 0; }

    /* policy: the vendor verifier's checks */
    if (now_ms > expiry + LEEWAY_MS) return 0;          /* TOKEN_EXPIRED */
    if (issued > now_ms + LEEWAY_MS) return 0;          /* TOKEN_NOT_YET_VALID */
    if (strcmp(s->fields[F_REQUESTOR], requestor) != 0) return 0;  /* INVALID_REQUESTOR_ID */
    return 1;
}

/* A fixed amount of work, for valgrind --tool=callgrind --toggle-collect=counted_loop. */
__attribute__((noinline)) static long long counted_loop(state_t *s, long long count) {
    long long passed = 0;
    for (long long i = 0; i < count; i++) passed += process(s, lines[i % line_count].bytes, lines[i % line_count].length);
    return passed;
}

/* ---- timing ---------------------------------------------------------------------- */

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct { double deadline; long long done; } job_t;

static void *worker(void *arg) {
    job_t *job = arg;
    state_t *s = state_new();
    size_t index = 0;
    long long done = 0;
    for (;;) {
        for (int k = 0; k < 64; k++) {
            process(s, lines[index].bytes, lines[index].length);
            if (++index == line_count) index = 0;
        }
        done += 64;
        if (monotonic() >= job->deadline) break;
    }
    job->done = done;
    return NULL;
}

static double run(int threads, double seconds, long long *total) {
    pthread_t handles[64];
    job_t jobs[64];
    double began = monotonic();
    for (int t = 0; t < threads; t++) {
        jobs[t].deadline = began + seconds;
        jobs[t].done = 0;
        if (pthread_create(&handles[t], NULL, worker, &jobs[t]) != 0) die("pthread_create failed");
    }
    *total = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(handles[t], NULL);
        *total += jobs[t].done;
    }
    return monotonic() - began;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: tokenbench_c parse|verify --corpus FILE [--key PEM --now EPOCH_MS] [--threads N] [--seconds S]");
    verify_mode = strcmp(argv[1], "verify") == 0;
    const char *corpus = NULL, *key = NULL;
    int threads = 1;
    double seconds = 3, warmup = 0.5;
    long long count = -1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--naive")) { naive = 1; continue; }
        if (!strcmp(a, "--corpus")) corpus = v;
        else if (!strcmp(a, "--key")) key = v;
        else if (!strcmp(a, "--now")) now_ms = atoll(v);
        else if (!strcmp(a, "--requestor")) requestor = v;
        else if (!strcmp(a, "--threads")) threads = atoi(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--warmup")) warmup = atof(v);
        else if (!strcmp(a, "--count")) count = atoll(v);
        else die("unknown option");
        i++;
    }
    if (!corpus || threads < 1 || threads > 64) die("bad arguments");
    xmlInitParser();
    b64_init();
    sax_init();
    read_corpus(corpus);
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (verify_mode) {
        if (!key) die("verify needs --key");
        FILE *file = fopen(key, "rb");
        if (!file) die("cannot read the key");
        public_key = PEM_read_PUBKEY(file, NULL, NULL, NULL);
        fclose(file);
        if (!public_key) die("not a PEM public key");
    }
    /* Every token must pass once, untimed. */
    state_t *check = state_new();
    for (size_t i = 0; i < line_count; i++) {
        if (!process(check, lines[i].bytes, lines[i].length)) {
            fprintf(stderr, "tokenbench_c: token %zu does not pass %s\n", i + 1, argv[1]);
            return 1;
        }
    }
    if (count >= 0) {
        printf("COUNTED %lld %lld\n", count, counted_loop(check, count));
        return 0;
    }
    long long total;
    if (warmup > 0) run(threads, warmup, &total);
    double elapsed = run(threads, seconds, &total);
    printf("RESULT %.1f %lld %.6f\n", (double)total / elapsed, total, elapsed);
    return 0;
}
