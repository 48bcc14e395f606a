import Foundation
import PermissionModel

extension String {
    var dropLastDot: String { hasSuffix(".") ? String(dropLast()) : self }
}

/// The members of one JSON object being read, with the path used in messages.
struct Fields {
    let members: [(key: String, value: JSONValue)]
    /// The object's path followed by a dot, or empty at the top level.
    let path: String

    init(_ members: [(key: String, value: JSONValue)], path: String) {
        self.members = members
        self.path = path.isEmpty ? "" : path + "."
    }

    init(_ value: JSONValue, path: String) throws(PermissionModelError) {
        guard case .object(let members) = value else {
            throw PermissionModelError("expected an object, got \(value.typeName)", field: path)
        }
        self.init(members, path: path)
    }

    func has(_ name: String) -> Bool { lookup(name) != nil }

    /// Whether the object holds `name` with the value `null`.
    func isNull(_ name: String) -> Bool { members.contains { $0.key == name && $0.value == .null } }

    private func lookup(_ name: String) -> JSONValue? {
        for member in members where member.key == name { return member.value == .null ? nil : member.value }
        return nil
    }

    func rejectUnknown(allowed: Set<String>) throws(PermissionModelError) {
        for member in members where !allowed.contains(member.key) {
            throw PermissionModelError(
                "unknown field; expected only \(allowed.sorted().joined(separator: ", "))", field: path + shown(member.key))
        }
    }

    func required(_ name: String) throws(PermissionModelError) -> JSONValue {
        guard let value = lookup(name) else { throw PermissionModelError("is required but missing", field: path + name) }
        return value
    }

    func string(_ name: String) throws(PermissionModelError) -> String {
        let value = try required(name)
        guard case .string(let text) = value else {
            throw PermissionModelError("expected a string, got \(value.typeName)", field: path + name)
        }
        return text
    }

    func optionalString(_ name: String) throws(PermissionModelError) -> String? {
        guard has(name) else { return nil }
        return try string(name)
    }

    func object(_ name: String) throws(PermissionModelError) -> Fields {
        try Fields(try required(name), path: path + name)
    }

    func time(_ name: String) throws(PermissionModelError) -> Timestamp {
        let text = try string(name)
        do {
            return try Timestamp(rfc3339: text)
        } catch {
            throw PermissionModelError(error.reason, field: path + name)
        }
    }

    func optionalTime(_ name: String) throws(PermissionModelError) -> Timestamp? {
        guard has(name) else { return nil }
        return try time(name)
    }

    func uuid(_ name: String) throws(PermissionModelError) -> UUID {
        let text = try string(name)
        guard text.utf8.count == 36, let id = UUID(uuidString: text) else {
            throw PermissionModelError("\(quoted(text)) is not a UUID such as 6A3F1C2E-0000-4000-8000-000000000001", field: path + name)
        }
        return id
    }

    func optionalInteger(_ name: String) throws(PermissionModelError) -> Int64? {
        guard let value = lookup(name) else { return nil }
        guard case .number(let text) = value else {
            throw PermissionModelError("expected a whole number, got \(value.typeName)", field: path + name)
        }
        guard let number = Int64(text) else {
            let reason = text.contains(where: { ".eE".contains($0) }) ? "must be a whole number, not \(text)" : "\(text.prefix(40)) is out of range"
            throw PermissionModelError(reason, field: path + name)
        }
        return number
    }

    func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(PermissionModelError) -> E
    where E.RawValue == String {
        try EventJSON.enumerationValue(try required(name), type, path: path + name)
    }

    func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(PermissionModelError) -> E?
    where E.RawValue == String {
        guard has(name) else { return nil }
        return try enumeration(name, type)
    }

    func array<T>(_ name: String, _ element: (JSONValue, String) throws(PermissionModelError) -> T) throws(PermissionModelError) -> [T] {
        let value = try required(name)
        guard case .array(let items) = value else {
            throw PermissionModelError("expected an array, got \(value.typeName)", field: path + name)
        }
        var result: [T] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            result.append(try element(item, "\(path)\(name)[\(index)]"))
        }
        return result
    }

    func optionalArray<T>(_ name: String, _ element: (JSONValue, String) throws(PermissionModelError) -> T) throws(PermissionModelError) -> [T]? {
        guard has(name) else { return nil }
        return try array(name, element)
    }
}
