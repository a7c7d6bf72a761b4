import Foundation

/// Printing for the CLI: JSON lines on stdout, messages on stderr.
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

    static func pretty(_ value: some Encodable) {
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.withoutEscapingSlashes, .sortedKeys, .prettyPrinted]
        guard let data = try? pretty.encode(value) else { return }
        print(String(decoding: data, as: UTF8.self))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("image-engine: \(message)\n".utf8))
    }

    /// True when stderr is a terminal, where a progress line helps and does not pollute logs.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    static func progress(_ text: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }
}
