/* A 32-bit program (built with -m32 -nostdlib -static): the recorder has no
   tool for it, so it runs untraced. Exits 3. */
void _start(void)
{
	__asm__ volatile("movl $1, %eax\n\tmovl $3, %ebx\n\tint $0x80");
}
