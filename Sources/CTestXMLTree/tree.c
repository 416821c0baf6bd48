#include "CTestXMLTree.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t length, capacity;
    int failed;
} buffer_t;

static void put(buffer_t *b, const char *text, size_t length) {
    if (b->failed) return;
    if (b->length + length + 1 > b->capacity) {
        size_t capacity = (b->length + length + 1) * 2;
        char *grown = realloc(b->data, capacity);
        if (!grown) { b->failed = 1; return; }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, text, length);
    b->length += length;
}

static void puts_(buffer_t *b, const char *text) { if (text) put(b, text, strlen(text)); }
static void end_record(buffer_t *b) { put(b, "", 1); }

static int is_blank(const char *text) {
    for (; text && *text; text++)
        if (*text != ' ' && *text != '\t' && *text != '\n' && *text != '\r') return 0;
    return 1;
}

/// "prefix:" + name, appended to b.
static void put_qname(buffer_t *b, const xmlChar *name, const xmlNs *ns) {
    if (ns && ns->prefix) { puts_(b, (const char *)ns->prefix); put(b, ":", 1); }
    puts_(b, (const char *)name);
}

/// Returns 0, or CTEST_TREE_MIXED_CONTENT.
static int walk(buffer_t *b, xmlNodePtr node, const char *path, int is_root) {
    size_t path_length = strlen(path);
    const char *slash = path_length ? "/" : "";
    for (xmlNsPtr ns = node->nsDef; ns; ns = ns->next) {
        puts_(b, path); puts_(b, slash); puts_(b, "@xmlns");
        if (ns->prefix) { put(b, ":", 1); puts_(b, (const char *)ns->prefix); }
        put(b, "=", 1); puts_(b, (const char *)ns->href); end_record(b);
    }
    for (xmlAttrPtr attribute = node->properties; attribute; attribute = attribute->next) {
        xmlChar *value = xmlNodeGetContent((xmlNodePtr)attribute);
        puts_(b, path); puts_(b, slash); put(b, "@", 1);
        put_qname(b, attribute->name, attribute->ns);
        put(b, "=", 1); puts_(b, (const char *)value); end_record(b);
        xmlFree(value);
    }
    buffer_t text = {0};
    int elements = 0, other = 0;
    for (xmlNodePtr child = node->children; child; child = child->next) {
        if (child->type == XML_ELEMENT_NODE) elements++;
        else if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) puts_(&text, (const char *)child->content);
        else other++;
    }
    put(&text, "", 1);
    int result = 0;
    if (other) {
        result = CTEST_TREE_MIXED_CONTENT;
    } else if (elements == 0) {
        if (is_root) {
            if (!is_blank(text.data)) result = CTEST_TREE_MIXED_CONTENT;
        } else {
            puts_(b, path); put(b, "=", 1); put(b, text.data, text.length - 1); end_record(b);
        }
    } else if (!is_blank(text.data)) {
        result = CTEST_TREE_MIXED_CONTENT;
    } else {
        for (xmlNodePtr child = node->children; child && !result; child = child->next) {
            if (child->type != XML_ELEMENT_NODE) continue;
            buffer_t child_path = {0};
            puts_(&child_path, path); puts_(&child_path, slash);
            put_qname(&child_path, child->name, child->ns);
            put(&child_path, "", 1);
            result = child_path.failed ? CTEST_TREE_MIXED_CONTENT : walk(b, child, child_path.data, 0);
            free(child_path.data);
        }
    }
    free(text.data);
    return result;
}

char *ctest_tree_fields(const unsigned char *bytes, size_t length, int *status, size_t *out_length) {
    *out_length = 0;
    int options = XML_PARSE_NONET | XML_PARSE_NOENT | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC;
    xmlDocPtr document = xmlReadMemory((const char *)bytes, (int)length, NULL, "UTF-8", options);
    xmlNodePtr root = document ? xmlDocGetRootElement(document) : NULL;
    if (!root) {
        if (document) xmlFreeDoc(document);
        *status = CTEST_TREE_NOT_WELL_FORMED;
        return NULL;
    }
    buffer_t b = {0};
    put(&b, "", 0);
    *status = walk(&b, root, "", 1);
    xmlFreeDoc(document);
    if (b.failed) { free(b.data); *status = CTEST_TREE_NOT_WELL_FORMED; return NULL; }
    *out_length = b.length;
    return b.data;
}

void ctest_tree_free(char *buffer) { free(buffer); }

static void put_nodes(buffer_t *b, xmlNodePtr node) {
    for (; node; node = node->next) {
        switch (node->type) {
        case XML_ELEMENT_NODE:
            put(b, "<", 1); puts_(b, (const char *)node->name); end_record(b);
            for (xmlAttrPtr attribute = node->properties; attribute; attribute = attribute->next) {
                xmlChar *value = xmlNodeGetContent((xmlNodePtr)attribute);
                put(b, "@", 1); puts_(b, (const char *)attribute->name); put(b, "=", 1);
                puts_(b, (const char *)value); end_record(b);
                xmlFree(value);
            }
            put_nodes(b, node->children);
            put(b, ">", 1); end_record(b);
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            put(b, "#", 1); puts_(b, (const char *)node->content); end_record(b);
            break;
        case XML_COMMENT_NODE:
            put(b, "!", 1); puts_(b, (const char *)node->content); end_record(b);
            break;
        default:
            break;
        }
    }
}

char *ctest_markup_nodes(const unsigned char *bytes, size_t length, int html, int *status, size_t *out_length) {
    *out_length = 0;
    xmlDocPtr document;
    if (html) {
        int options = HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING;
        document = htmlReadMemory((const char *)bytes, (int)length, NULL, "UTF-8", options);
    } else {
        int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
        document = xmlReadMemory((const char *)bytes, (int)length, NULL, "UTF-8", options);
    }
    xmlNodePtr root = document ? xmlDocGetRootElement(document) : NULL;
    if (!root) {
        if (document) xmlFreeDoc(document);
        *status = CTEST_TREE_NOT_WELL_FORMED;
        return NULL;
    }
    buffer_t b = {0};
    put(&b, "", 0);
    put_nodes(&b, root);
    xmlFreeDoc(document);
    if (b.failed) { free(b.data); *status = CTEST_TREE_NOT_WELL_FORMED; return NULL; }
    *status = CTEST_TREE_OK;
    *out_length = b.length;
    return b.data;
}
