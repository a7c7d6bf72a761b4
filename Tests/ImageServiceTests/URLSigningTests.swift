import Foundation
@testable import ImageService
import Testing

@Suite("Service: URL signatures")
struct URLSigningTests {
    static let key = SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!
    /// The example in imgproxy's documentation ("Signing a URL"), with its signature.
    static let documentedPath = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
    static let documentedSignature = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"

    @Test("imgproxy's documentation example: key 736563726574, salt 68656C6C6F")
    func documentationVector() throws {
        #expect(URLSigner.signature(of: Self.documentedPath, key: Self.key) == Self.documentedSignature)
        let signer = URLSigner(keys: [Self.key])
        #expect(signer.verify(Self.documentedSignature, path: Self.documentedPath))
        #expect(signer.sign(Self.documentedPath) == "/" + Self.documentedSignature + Self.documentedPath)
        // The rest of the example's path, as this service reads it.
        let parts = try ProcessingPath("/" + Self.documentedSignature + Self.documentedPath).contents()
        #expect(parts.source == "http://example.com/images/curiosity.jpg" && parts.extension == "png")
        let options = try OptionParser.parse(parts.options)
        #expect(options.resizingType == .fill && options.width == 300 && options.height == 400 && !options.enlarge && options.gravity == .smart)
    }

    @Test("the signer builds the documentation's path from its parts, in imgproxy's 16-character chunks")
    func signerBuildsDocumentedPath() {
        let signed = URLSigner(keys: [Self.key]).signedPath(
            options: "rs:fill:300:400:0/g:sm", source: "http://example.com/images/curiosity.jpg",
            extension: "png")
        #expect(signed == "/" + Self.documentedSignature + Self.documentedPath)
    }

    @Test("any change to the path, a truncated or padded signature, or another key fails verification")
    func tampering() {
        let signer = URLSigner(keys: [Self.key])
        #expect(!signer.verify(Self.documentedSignature, path: Self.documentedPath.replacingOccurrences(of: "300", with: "301")))
        #expect(!signer.verify(String(Self.documentedSignature.dropLast()), path: Self.documentedPath))
        #expect(!signer.verify(Self.documentedSignature + "A", path: Self.documentedPath))
        #expect(!signer.verify("", path: Self.documentedPath))
        #expect(!signer.verify("insecure", path: Self.documentedPath))
        let other = SigningKey(hexKey: "736563726575", hexSalt: "68656C6C6F")!
        #expect(!URLSigner(keys: [other]).verify(Self.documentedSignature, path: Self.documentedPath))
    }

    @Test("key rotation: every configured pair verifies, the first signs")
    func rotation() {
        let old = Self.key
        let new = SigningKey(hexKey: "0123456789abcdef", hexSalt: "fedcba98")!
        let third = SigningKey(hexKey: "aa", hexSalt: "bb")!
        let signer = URLSigner(keys: [new, old])
        let path = "/rs:fit:100:100/plain/https://example.com/a.jpg"
        #expect(signer.verify(URLSigner.signature(of: path, key: old), path: path))
        #expect(signer.verify(URLSigner.signature(of: path, key: new), path: path))
        #expect(!signer.verify(URLSigner.signature(of: path, key: third), path: path))
        #expect(signer.sign(path) == "/" + URLSigner.signature(of: path, key: new) + path)
    }

    @Test("key pairs from the environment: comma-separated, paired in order, hex only")
    func keyPairs() throws {
        let pairs = try #require(SigningKey.pairs(keys: "736563726574, 0a0b", salts: "68656C6C6F,0c"))
        #expect(pairs == [Self.key, SigningKey(hexKey: "0a0b", hexSalt: "0c")!])
        #expect(SigningKey.pairs(keys: nil, salts: nil) == [])
        #expect(SigningKey.pairs(keys: "aa,bb", salts: "cc") == nil, "as many salts as keys")
        #expect(SigningKey.pairs(keys: "abc", salts: "cc") == nil, "odd-length hex")
        #expect(SigningKey.pairs(keys: "zz", salts: "cc") == nil, "not hex")
        #expect(SigningKey(hexKey: "", hexSalt: "aa") == nil)
    }

    @Test("plain sources are percent-encoded so that ?, #, % and @ survive, and read back exactly")
    func plainRoundTrip() throws {
        let source = "https://cdn.example.com/a b/ç.jpg?size=large&v=2#frag@x%41"
        let signed = try #require(URLSigner(keys: [Self.key]).signedPath(options: "w:100", source: source, extension: "png", plain: true))
        let parts = try ProcessingPath(signed).contents()
        #expect(parts.source == source && parts.extension == "png" && parts.options == ["w:100"])
        let base64 = try #require(URLSigner(keys: [Self.key]).signedPath(options: "w:100", source: source))
        let decoded = try ProcessingPath(base64).contents()
        #expect(decoded.source == source && decoded.extension == nil)
    }

    @Test("a padded signature is refused: each image has one URL, and one cache key")
    func padding() {
        let signer = URLSigner(keys: [Self.key])
        #expect(signer.verify(Self.documentedSignature, path: Self.documentedPath))
        #expect(!signer.verify(Self.documentedSignature + "=", path: Self.documentedPath))
    }

    @Test("IMAGE_ENGINE_SIGNATURE_SIZE truncates signatures for signing and verifying, as imgproxy's does")
    func truncatedSignatures() {
        let short = URLSigner(keys: [Self.key], signatureSize: 8)
        let signature = URLSigner.signature(of: Self.documentedPath, key: Self.key, size: 8)
        // The first 8 bytes of the documented HMAC: its first 10 base64url characters, and a tail.
        #expect(signature.count == 11 && Self.documentedSignature.hasPrefix(String(signature.prefix(10))))
        #expect(short.verify(signature, path: Self.documentedPath))
        #expect(short.sign(Self.documentedPath) == "/" + signature + Self.documentedPath)
        #expect(!short.verify(Self.documentedSignature, path: Self.documentedPath), "a full signature is not a truncated one")
        #expect(!URLSigner(keys: [Self.key]).verify(signature, path: Self.documentedPath), "nor the other way round")
        #expect(!short.verify(URLSigner.signature(of: Self.documentedPath + "x", key: Self.key, size: 8), path: Self.documentedPath))
    }

    @Test("what proxies do to a path is undone before the signature is checked, as imgproxy does")
    func redenormalisation() throws {
        #expect(
            ProcessingPath.redenormalised("/rs%3Afill%3A100%3A100/g%3Ano/plain/http:/example.com/a.jpg")
                == "/rs:fill:100:100/g:no/plain/http://example.com/a.jpg")
        #expect(ProcessingPath.redenormalised("/plain/https:/example.com/a.jpg@png") == "/plain/https://example.com/a.jpg@png")
        #expect(ProcessingPath.redenormalised("/w:10/plain/http://example.com/a:/b") == "/w:10/plain/http://example.com/a:/b", "already whole")
        #expect(ProcessingPath.redenormalised("/w%3A10/aHR0cDovL2V4YW1w.png") == "/w:10/aHR0cDovL2V4YW1w.png")
        let signed = try #require(URLSigner(keys: [Self.key]).signedPath(options: "rs:fill:100:100", source: "http://example.com/a.jpg", plain: true))
        let proxied = signed.replacingOccurrences(of: "rs:fill:100:100", with: "rs%3Afill%3A100%3A100").replacingOccurrences(
            of: "http://", with: "http:/")
        let path = try ProcessingPath(proxied)
        #expect(URLSigner(keys: [Self.key]).verify(path.signature, path: path.signed))
        #expect(try path.contents().source == "http://example.com/a.jpg")
    }
}
