console.error('placeholder');
