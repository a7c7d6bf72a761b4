import URLSigning
import ArgumentParser
import ImageService

/// `image-engine sign`: the signed path for a source and options, as `serve` checks it.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the signed path for a source URL and processing options.",
        discussion: """
            Signs with the first pair in IMAGE_ENGINE_KEY and IMAGE_ENGINE_SALT (hex), as serve \
            verifies: base64url(HMAC-SHA256(key, salt + path)). The source is base64url-encoded \
            (split every 16 characters) unless --plain. Example: image-engine sign \
            https://example.com/a.jpg --options rs:fill:400:400/g:no --ext jpg

            Examples:
              image-engine sign https://example.com/1.jpg --options rs:fill:400:400
              curl -o a.jpg "http://127.0.0.1:8080$(image-engine sign SRC --options w:800)"
            """
    )

    @Argument(help: ArgumentHelp("The source image's URL.", valueName: "source-url"))
    var sourceURL: String

    @Option(name: .long, help: ArgumentHelp("Processing options, '/'-separated (rs:fill:400:400/g:no/q:80).", valueName: "options"))
    var options: String

    @Option(name: .long, help: ArgumentHelp("Output format extension (jpg, png, webp, avif); none lets serve choose.", valueName: "ext"))
    var ext: String?

    @Flag(name: .long, help: "Put the source percent-encoded after /plain/ instead of base64url.")
    var plain = false

    func validate() throws {
        _ = try ServeCommand.keys(unsafe: false)
        _ = try ServeCommand.signatureSize()
    }

    func run() throws {
        let signer = URLSigner(keys: try ServeCommand.keys(unsafe: false), signatureSize: try ServeCommand.signatureSize())
        let unsigned = URLSigner.unsignedPath(options: options, source: sourceURL, extension: ext, plain: plain)
        if let segment = URLSigner.dotSegment(in: unsigned) {
            throw ValidationError(
                "the path would have a \"\(segment)\" segment, which serve refuses (caches in front resolve it): sign the source without --plain, or resolve it first"
            )
        }
        guard let path = signer.signedPath(options: options, source: sourceURL, extension: ext, plain: plain) else {
            throw ValidationError("no signing key")
        }
        print(path)
    }
}
