import Foundation
import Logging

/// A swift-log handler that writes one JSON object per line to standard output: `time`
/// (ISO 8601 with milliseconds), `level`, `label`, `message`, and every metadata value as a
/// field of its own — what log shippers (Vector, Fluent Bit, Loki) read without a parser.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (Data) -> Void

    /// A handler for the logger `label`, writing to standard output without ever blocking the
    /// caller (lines are dropped, not waited for, when the output stalls).
    public init(label: String) {
        self.init(label: label) { line in StandardOutputSink.shared.write(line) }
    }

    /// A handler that hands each line (ending in a newline) to `write`.
    public init(label: String, write: @escaping @Sendable (Data) -> Void) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: Field] = [:]
        let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged { fields[key] = Field(value) }
        fields["time"] = .text(Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))
        fields["level"] = .text(event.level.rawValue)
        fields["label"] = .text(label)
        fields["message"] = .text(event.message.description)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(fields) else { return }
        line.append(UInt8(ascii: "\n"))
        write(line)
    }
}

/// One JSON value of a log line.
private enum Field: Encodable {
    case text(String)
    case number(Double)

    init(_ value: Logger.Metadata.Value) {
        if case .stringConvertible(let convertible) = value, let number = Double(convertible.description), number.isFinite {
            self = .number(number)
        } else {
            self = .text(value.description)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .number(let number) where number == number.rounded() && abs(number) < 1e15: try container.encode(Int(number))
        case .number(let number): try container.encode(number)
        }
    }
}
