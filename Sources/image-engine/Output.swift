import ArgumentParser
import Foundation
import ImageCodec

/// Printing for the CLI: JSON on stdout, messages on stderr, one line per error.
enum Output {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    /// Prints `value` as one line of JSON on stdout.
    static func jsonLine(_ value: some Encodable) {
        guard let data = try? encoder.encode(value) else { return }
        print(String(decoding: data, as: UTF8.self))
    }

    /// Prints `value` as indented JSON on stdout.
    static func pretty(_ value: some Encodable) {
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.withoutEscapingSlashes, .sortedKeys, .prettyPrinted]
        guard let data = try? pretty.encode(value) else { return }
        print(String(decoding: data, as: UTF8.self))
    }

    /// One line on stderr: `image-engine: message`.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("image-engine: \(message)\n".utf8))
    }

    /// `file: reason` for a file that failed; an I/O error already names the path.
    static func message(_ file: String, _ error: ImageCodecError) -> String {
        if case .io = error { return error.description }
        return "\(file): \(error)"
    }

    /// Prints `message` as an error and returns the exit status of a failed operation (1).
    static func failure(_ message: String) -> ExitCode {
        error(message)
        return ExitCode(1)
    }

    /// Runs `body`; a failure is printed as one line and becomes exit status 1.
    @discardableResult
    static func failing<Result, Failure: Error & CustomStringConvertible>(_ body: () throws(Failure) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw failure(error.description)
        }
    }

    /// True when stderr is a terminal, where a progress line helps and does not pollute logs.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Rewrites the progress line on stderr.
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }
}
