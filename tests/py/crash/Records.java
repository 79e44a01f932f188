// SPDX-License-Identifier: MIT
// Records.java -- appends "rec N" to `data` three times, an fsync after
// each, then prints it: what a Java store does, in a JVM that writes its
// performance counters (/tmp/hsperfdata_USER/PID) as it runs.
import java.io.FileOutputStream;

public class Records {
    public static void main(String[] args) throws Exception {
        for (int i = 1; i <= 3; i++) {
            try (FileOutputStream f = new FileOutputStream("data", true)) {
                f.write(("rec " + i + "\n").getBytes());
                f.getFD().sync();
            }
            System.out.println("rec " + i);
            System.out.flush();
        }
    }
}
