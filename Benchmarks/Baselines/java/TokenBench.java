// TokenBench: the Java 17 baseline for Benchmarks/run, JDK only.
//
// Works the way the vendor's Java "Media Token Verifier" does: the legacy
// `<signatureInfo>B64<signatureInfo>` prefix is not XML, so it is split off
// textually; the token element is parsed with the JDK's DOM
// (DocumentBuilderFactory, secure processing, no DOCTYPE, no external
// entities); its exact bytes are verified with Signature("SHA256withRSA")
// (SHA256withECDSA / Ed25519 for the other keys); expiry and requestor are
// checked. Each thread keeps its DocumentBuilder and Signature, as a tuned
// service would. The JIT is warmed up (--warmup seconds, 3 by default) before timing.
//
//   java TokenBench.java parse  --corpus FILE [--threads N] [--seconds S] [--warmup S]
//   java TokenBench.java verify --corpus FILE --key PUB.pem --now EPOCH_MS [--requestor ID] [...]
//
// Prints `RESULT <tokens/s> <tokens> <seconds>`.

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

public final class TokenBench {
    static final long LEEWAY_MS = 30_000;
    static final String OPEN = "<signatureInfo>";
    static final String CLOSE = "</signatureInfo>";
    static final DateTimeFormatter ISSUE_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss xx");

    static boolean verifyMode;
    static PublicKey key;
    static String algorithm;
    static long now;
    static String requestor = "TNT";
    static byte[][] tokens;

    /** One thread's reusable parser and signature engine. */
    static final class Worker {
        final DocumentBuilder builder;
        final Signature signature;

        Worker() throws Exception {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
            factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
            factory.setXIncludeAware(false);
            factory.setExpandEntityReferences(false);
            factory.setNamespaceAware(true);
            builder = factory.newDocumentBuilder();
            signature = verifyMode ? Signature.getInstance(algorithm) : null;
        }

        /** One token through the whole check; true when it passes. */
        boolean step(byte[] record) {
            try {
                String text = new String(record, StandardCharsets.US_ASCII).trim();
                String xml = text.startsWith("<") ? text
                    : new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8);
                xml = xml.trim();
                // The vendor's split: the signature block is not XML.
                if (!xml.startsWith(OPEN)) return false;
                int end = xml.indexOf('<', OPEN.length());
                if (end < 0) return false;
                String signatureText = xml.substring(OPEN.length(), end);
                String element;
                if (xml.startsWith(OPEN, end)) element = xml.substring(end + OPEN.length());
                else if (xml.startsWith(CLOSE, end)) element = xml.substring(end + CLOSE.length());
                else return false;
                byte[] signed = element.getBytes(StandardCharsets.UTF_8);

                builder.reset();
                Element root = builder.parse(new ByteArrayInputStream(signed)).getDocumentElement();
                String rootName = root.getLocalName();
                if (!rootName.equals("authToken") && !rootName.equals("shortAuthorizationToken")) return false;
                String requestorID = null, resourceID = null, ttl = null, issueTime = null;
                for (Node child = root.getFirstChild(); child != null; child = child.getNextSibling()) {
                    if (child.getNodeType() != Node.ELEMENT_NODE) continue;
                    String value = child.getTextContent();
                    switch (child.getLocalName()) {
                        case "requestorID": if (requestorID != null) return false; requestorID = value; break;
                        case "resourceID": if (resourceID != null) return false; resourceID = value; break;
                        case "ttl": if (ttl != null) return false; ttl = value; break;
                        case "issueTime": if (issueTime != null) return false; issueTime = value; break;
                        default: break;
                    }
                }
                if (requestorID == null || resourceID == null || ttl == null || issueTime == null) return false;
                long issued = OffsetDateTime.parse(issueTime, ISSUE_TIME).toInstant().toEpochMilli();
                long expiry = issued + Long.parseLong(ttl);
                if (!verifyMode) return true;

                signature.initVerify(key);
                signature.update(signed);
                if (!signature.verify(Base64.getMimeDecoder().decode(signatureText))) return false;
                if (now > expiry + LEEWAY_MS || issued > now + LEEWAY_MS) return false;
                return requestorID.equals(requestor);
            } catch (Exception rejected) {
                return false;
            }
        }
    }

    static PublicKey loadKey(Path path) throws Exception {
        String pem = Files.readString(path);
        String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        X509EncodedKeySpec spec = new X509EncodedKeySpec(Base64.getDecoder().decode(body));
        for (String[] kind : new String[][] {{"RSA", "SHA256withRSA"}, {"EC", "SHA256withECDSA"}, {"Ed25519", "Ed25519"}}) {
            try {
                PublicKey loaded = KeyFactory.getInstance(kind[0]).generatePublic(spec);
                algorithm = kind[1];
                return loaded;
            } catch (Exception notThisKind) {
                // try the next
            }
        }
        throw new IllegalArgumentException("unsupported key " + path);
    }

    static double run(int threads, double seconds, AtomicLong total) throws Exception {
        long began = System.nanoTime();
        long deadline = began + (long) (seconds * 1e9);
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Worker worker = new Worker();
            Thread thread = new Thread(() -> {
                int index = 0;
                long done = 0;
                while (true) {
                    for (int k = 0; k < 64; k++) {
                        worker.step(tokens[index]);
                        if (++index == tokens.length) index = 0;
                    }
                    done += 64;
                    if (System.nanoTime() >= deadline) break;
                }
                total.addAndGet(done);
            });
            running.add(thread);
            thread.start();
        }
        for (Thread thread : running) thread.join();
        return (System.nanoTime() - began) / 1e9;
    }

    public static void main(String[] args) throws Exception {
        verifyMode = args.length > 0 && args[0].equals("verify");
        String corpus = null, keyPath = null;
        int threads = 1;
        double seconds = 3, warmup = 3;
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--corpus": corpus = args[i + 1]; break;
                case "--key": keyPath = args[i + 1]; break;
                case "--now": now = Long.parseLong(args[i + 1]); break;
                case "--requestor": requestor = args[i + 1]; break;
                case "--threads": threads = Integer.parseInt(args[i + 1]); break;
                case "--seconds": seconds = Double.parseDouble(args[i + 1]); break;
                case "--warmup": warmup = Double.parseDouble(args[i + 1]); break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (verifyMode) key = loadKey(Path.of(keyPath));
        List<byte[]> lines = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(corpus), StandardCharsets.US_ASCII)) {
            if (!line.isBlank()) lines.add(line.getBytes(StandardCharsets.US_ASCII));
        }
        tokens = lines.toArray(new byte[0][]);
        Worker check = new Worker();
        for (int i = 0; i < tokens.length; i++) {
            if (!check.step(tokens[i])) {
                System.err.println("TokenBench: token " + (i + 1) + " does not pass " + args[0]);
                System.exit(1);
            }
        }
        AtomicLong total = new AtomicLong();
        if (warmup > 0) run(threads, warmup, total);
        total.set(0);
        double elapsed = run(threads, seconds, total);
        System.out.printf("RESULT %.1f %d %.6f%n", total.get() / elapsed, total.get(), elapsed);
    }
}
