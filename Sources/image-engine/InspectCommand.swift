import ArgumentParser
import Foundation
import ImageCodec

/// `image-engine inspect FILE...`: header facts as one JSON object per line.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print each file's header (format, size, orientation, alpha, depth, frames) as a JSON line, without decoding pixels.",
        discussion: """
            The output is JSON lines only, one per file in argument order, so errors are JSON too: a \
            file that cannot be read gets a {"file", "error"} line in its place. The exit status is 1 \
            if any file failed, 64 for a usage mistake.

            Examples:
              image-engine inspect photo.jpg
              image-engine inspect photos/*.jpg > headers.jsonl
            """
    )

    @Argument(help: ArgumentHelp("JPEG, PNG, WebP, HEIC, AVIF or GIF files.", valueName: "file"))
    var files: [String]

    struct Report: Encodable {
        var file: String
        var format: String
        var width: Int
        var height: Int
        var orientation: Int
        var displayWidth: Int
        var displayHeight: Int
        var hasAlpha: Bool
        var bitDepth: Int
        var progressive: Bool
        var colorModel: String
        /// 1 for a still image; an animated GIF's or WebP's frames.
        var frames: Int
    }

    struct Failure: Encodable {
        var file: String
        var error: String
    }

    func run() throws {
        var failed = false
        for file in files {
            do {
                let header = try ImageDecoder.header(contentsOf: URL(fileURLWithPath: file))
                Output.jsonLine(
                    Report(
                        file: file, format: header.format.rawValue, width: header.width, height: header.height,
                        orientation: header.orientation.rawValue, displayWidth: header.displayWidth,
                        displayHeight: header.displayHeight, hasAlpha: header.hasAlpha, bitDepth: header.bitDepth,
                        progressive: header.progressive, colorModel: header.colorModel.rawValue, frames: header.frameCount))
            } catch {
                failed = true
                Output.jsonLine(Failure(file: file, error: error.description))
            }
        }
        if failed { throw ExitCode(1) }
    }
}
