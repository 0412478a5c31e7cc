package io.rdmaactors.ffm.binding;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * C layouts as the x86-64 System V ABI lays them out: a member at the next multiple of its
 * alignment, the whole padded to its largest alignment. The padding is computed, not written, so a
 * mirror of a header lists only the header's members (or {@code pad_*} arrays for what the
 * provider never touches); {@code StructLayoutTest} checks every offset against the headers.
 */
public final class CLayout {

    private CLayout() {
    }

    public static MemoryLayout u8(String name) {
        return ValueLayout.JAVA_BYTE.withName(name);
    }

    public static MemoryLayout u16(String name) {
        return ValueLayout.JAVA_SHORT.withName(name);
    }

    public static MemoryLayout u32(String name) {
        return ValueLayout.JAVA_INT.withName(name);
    }

    public static MemoryLayout u64(String name) {
        return ValueLayout.JAVA_LONG.withName(name);
    }

    /** A pointer, read and written as its address (a {@code long}). */
    public static MemoryLayout pointer(String name) {
        return ValueLayout.JAVA_LONG.withName(name);
    }

    public static MemoryLayout array(String name, long count, MemoryLayout element) {
        return MemoryLayout.sequenceLayout(count, element).withName(name);
    }

    public static StructLayout struct(String name, MemoryLayout... members) {
        List<MemoryLayout> padded = new ArrayList<>();
        long offset = 0;
        long align = 1;
        int pads = 0;
        for (MemoryLayout m : members) {
            long a = m.byteAlignment();
            align = Math.max(align, a);
            long at = (offset + a - 1) / a * a;
            if (at > offset) {
                padded.add(MemoryLayout.paddingLayout(at - offset).withName("padding " + pads++));
            }
            padded.add(m);
            offset = at + m.byteSize();
        }
        long size = (offset + align - 1) / align * align;
        if (size > offset) {
            padded.add(MemoryLayout.paddingLayout(size - offset).withName("padding " + pads));
        }
        return MemoryLayout.structLayout(padded.toArray(MemoryLayout[]::new)).withName(name);
    }

    public static UnionLayout union(String name, MemoryLayout... members) {
        long align = Arrays.stream(members).mapToLong(MemoryLayout::byteAlignment).max().orElse(1);
        long size = Arrays.stream(members).mapToLong(MemoryLayout::byteSize).max().orElse(0);
        long padded = (size + align - 1) / align * align;
        UnionLayout union = MemoryLayout.unionLayout(members);
        if (padded > size) {
            union = MemoryLayout.unionLayout(append(members, MemoryLayout.paddingLayout(padded)));
        }
        return union.withName(name);
    }

    private static MemoryLayout[] append(MemoryLayout[] members, MemoryLayout last) {
        MemoryLayout[] all = Arrays.copyOf(members, members.length + 1);
        all[members.length] = last;
        return all;
    }

    /** The offset of a member named by its dotted path ({@code wr.rdma.rkey}), as C's offsetof. */
    public static long offset(GroupLayout layout, String path) {
        return layout.byteOffset(elements(path));
    }

    /** The layout of the member named by its dotted path. */
    public static MemoryLayout member(GroupLayout layout, String path) {
        return layout.select(elements(path));
    }

    private static PathElement[] elements(String path) {
        return Arrays.stream(path.split("\\.")).map(PathElement::groupElement).toArray(PathElement[]::new);
    }

    /** The dotted paths of every named member, nested structs and unions included, {@code pad_*} left out. */
    public static List<String> paths(GroupLayout layout) {
        List<String> out = new ArrayList<>();
        collect(layout, "", out);
        return out;
    }

    private static void collect(GroupLayout layout, String prefix, List<String> out) {
        for (MemoryLayout m : layout.memberLayouts()) {
            String name = m.name().orElse("");
            if (name.isEmpty() || name.startsWith("pad_") || name.startsWith("padding ")) {
                continue;
            }
            out.add(prefix + name);
            if (m instanceof GroupLayout nested) {
                collect(nested, prefix + name + ".", out);
            }
        }
    }
}
