/*
 * test_browser.c: writes report.html for realistic results and loads it in headless Chromium:
 * the page's own self-test (opened with #selftest: it clicks every sortable header and checks the
 * order, drives both filters, checks the charts decoded and that no script error was recorded) is
 * read back from --dump-dom; Chromium's log must hold no console error. Every Chromium run is bounded
 * by `timeout`, with a fresh profile, no network services, and --no-sandbox (the suite runs as root).
 */
#include "rd_test.h"
#include "sample_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHROMIUM_TIMEOUT_S 90

static const char *chromium_path(void)
{
    const char *env = getenv("RD_CHROMIUM");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    static const char *const candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (access(candidates[i], X_OK) == 0)
            return candidates[i];
    return NULL;
}

/* Runs chromium on url with extra arguments; stdout to out_path, stderr to err_path. */
static int run_chromium(const char *dir, const char *extra, const char *url, const char *out_path, const char *err_path)
{
    static int run;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "timeout -k 5 %d '%s' --headless --no-sandbox --disable-gpu --no-first-run "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--disable-default-apps --user-data-dir='%s/profile%d' --enable-logging=stderr --v=0 %s '%s' "
             ">'%s' 2>'%s'",
             CHROMIUM_TIMEOUT_S, chromium_path(), dir, run++, extra, url, out_path, err_path);
    int rc = system(cmd);
    return rc;
}

/* Lines of Chromium's log that report a page problem (console errors, uncaught exceptions, CSP). */
static int console_errors(const char *log)
{
    int n = 0;
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
        if (strstr(line, "CONSOLE") || strstr(line, "Uncaught") || strstr(line, "Content Security Policy") ||
            strstr(line, "Refused to")) {
            fprintf(stderr, "\n  chromium: %s", line);
            n++;
        }
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Writes the report of r, checks the text, runs the self-test in Chromium. */
static void check_report(const rd_result *r, const char *tag, const char *screenshot)
{
    char *dir = rd_test_tmpdir(tag);
    char html[1024], dom[1024], log[1024], url[1200];
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_report_html_save(r, html, &err), RD_OK);

    size_t len;
    char *text = rd_test_read_file(html, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    /* self-contained: no URL of any kind outside the data: images */
    CU_ASSERT_PTR_NULL(strstr(text, "http://"));
    CU_ASSERT_PTR_NULL(strstr(text, "https://"));
    CU_ASSERT_PTR_NULL(strstr(text, "src=\"//"));
    CU_ASSERT_PTR_NULL(strstr(text, "url("));
    CU_ASSERT_EQUAL(count(text, "<script"), 2); /* ours only: the hostile name stayed text */
    CU_ASSERT_PTR_NULL(strstr(text, RD_SAMPLE_EVIL_NAME));
    if (r->n_layers > 7)
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "&lt;/script&gt;&lt;script&gt;alert(&quot;x&amp;y&quot;)"));
    CU_ASSERT_EQUAL(count(text, "<tr data-i="), r->n_layers);
    free(text);

    snprintf(url, sizeof url, "file://%s#selftest", html);
    int rc = run_chromium(dir, "--virtual-time-budget=10000 --dump-dom", url, dom, log);
    CU_ASSERT_EQUAL(rc, 0);
    char *out = rd_test_read_file(dom, &len);
    char *logtext = rd_test_read_file(log, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    const char *pre = strstr(out, "<pre id=\"selftest\">");
    CU_ASSERT_PTR_NOT_NULL(pre);
    const char *end = pre ? strstr(pre, "</pre>") : NULL;
    const char *ok = pre ? strstr(pre, "SELFTEST OK") : NULL, *failed = pre ? strstr(pre, "FAIL") : NULL;
    if (!end || !ok || ok > end || (failed && failed < end)) {
        fprintf(stderr, "\n  self-test of %s:\n%.*s\n", html, end ? (int)(end - pre) : 400, pre ? pre : out);
        CU_FAIL("the page's self-test did not pass");
    }
    CU_ASSERT_EQUAL(count(out, "<tr data-i="), r->n_layers);
    CU_ASSERT_EQUAL(console_errors(logtext), 0);
    free(out);
    free(logtext);

    if (screenshot) {
        char extra[1200];
        snprintf(extra, sizeof extra, "--hide-scrollbars --window-size=1400,1000 --screenshot='%s'", screenshot);
        snprintf(url, sizeof url, "file://%s", html);
        CU_ASSERT_EQUAL(run_chromium(dir, extra, url, dom, log), 0);
        CU_ASSERT_EQUAL(access(screenshot, R_OK), 0);
    }
    free(dir);
}

static void test_realistic_with_board(void)
{
    rd_result r;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 40, true, 3, &err), RD_OK);
    check_report(&r, "browser_board", getenv("RD_BROWSER_SCREENSHOT"));
    rd_result_fini(&r);
}

static void test_simulator_only(void)
{
    rd_result r;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sample_result(&r, 24, false, 1, &err), RD_OK);
    check_report(&r, "browser_sim", NULL);
    rd_result_fini(&r);
}

static void test_empty(void)
{
    rd_result r;
    rd_result_init(&r);
    /* no layers, no findings, no config: the page still loads without a script error */
    check_report(&r, "browser_empty", NULL);
    rd_result_fini(&r);
}

RD_TEST_REGISTER(register_browser)
{
    if (!chromium_path())
        rd_test_skip_all("chromium is not installed (apt-get install chromium)");
    RD_SUITE("browser", {"realistic report with board data", test_realistic_with_board},
             {"simulator-only report", test_simulator_only}, {"empty result", test_empty});
}
